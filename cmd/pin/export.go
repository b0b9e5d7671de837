package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/compose"
	"github.com/pin-tool/pin/internal/export"
	"github.com/pin-tool/pin/internal/source"
)

type exportOptions struct {
	*globalOptions
	compose   composeFlags
	InPlace   bool
	Manifests []string
	Kustomize []string
	Env       []string
	Helm      []string
	Check     bool
	Force     bool
	// Environment is the environment whose lock is exported: needed,
	// and only allowed, when the catalogue declares environments.
	Environment string
}

func newExportCmd(g *globalOptions, s streams) *cobra.Command {
	o := &exportOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "export [--compose FILE]... [--in-place] [--manifests DIR]... [--kustomize DIR]... [--env FILE]... [--helm CHART]... [--check]",
		Short: "Write the lock where the deploy reads it: Compose, manifests, kustomize, env files",
		Long: `export writes each locked image, as repository:tag@sha256:…, where a deploy
reads it: where the catalogue's export block says, or the flags:

  --compose FILE     writes FILE's override beside it (compose.yaml →
                     compose.pin.yaml) with services.<name>.image for each
                     service a module covers, so that
                     docker compose -f compose.yaml -f compose.pin.yaml up -d
                     runs exactly the lock;
  --in-place         rewrites the image: of the Compose files (and of the
                     manifests under --manifests DIR) instead, keeping
                     comments, key order and formatting;
  --kustomize DIR    writes images: entries (name, newName, newTag, digest)
                     into DIR/kustomization.yaml for the images of DIR's
                     manifests;
  --env FILE         writes NAME_IMAGE=repository:tag@digest lines, one per
                     locked module (module forge → FORGE_IMAGE);
  --helm CHART       writes the tag and digest of each image of the chart's
                     values files (values.yaml, and its unpacked
                     subcharts'), in place: image.repository + image.tag
                     (+ image.digest), registry/repository/tag/digest
                     splits, whole references, and any value marked
                     # pin: MODULE (see docs/guides/helm.md).

--manifests, --kustomize and --env may be repeated. A flag that names a
file (--compose, --manifests, --kustomize, --env) replaces the export
block whole, as docker compose -f replaces compose.yaml; --project-name,
--profile and --in-place alone change the block's compose settings, as
docker compose -p does; beside files that name no Compose file,
--project-name and --profile are refused (exit 2).

A module covers a Compose service when it runs_on { compose =
"<project>/<service>" }, a manifest's container when it runs_on that
workload, else when it is the one module with that image repository.

Before writing, export previews the cutover on every host (as pin plan
does): it refuses, exit 1, when the lock would downgrade what a host runs,
or cannot be ordered against it; and it refuses, exit 1, to make a file name
an older (or unorderable) image than it names there, saying FILE:LINE, both
images and the rule. --check writes nothing and exits 1 when a
file disagrees with the lock. A reference whose tag and digest disagree
with the lock is reported with file:line. A reference a module covers that
export cannot write (a variable, a YAML alias or block scalar, a module not
in the lock) is named, and the run exits 1, --check too.

Writes are atomic, follow symbolic links to the file they name, keep its
mode, and a second run changes nothing. An override file pin did not write
(it lacks pin's header) is never replaced without --force; a file that
changed while export ran is never replaced.

A catalogue with environments has a lock per environment: --environment
NAME says which is exported (and its hosts are the ones the cutover is
previewed on); name the files that environment deploys from with the
flags.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runExport(cmd.Context(), o, s)
		},
	}
	o.compose.add(cmd)
	cmd.Flags().BoolVar(&o.InPlace, "in-place", false, "rewrite the image: references of the Compose files and manifests themselves")
	cmd.Flags().StringArrayVar(&o.Manifests, "manifests", nil, "a folder of Kubernetes manifests to rewrite in place (with --in-place); repeat for several")
	cmd.Flags().StringArrayVar(&o.Kustomize, "kustomize", nil, "a kustomize folder whose kustomization.yaml gets images: entries; repeat for several")
	cmd.Flags().StringArrayVar(&o.Env, "env", nil, "an env file to write NAME_IMAGE= lines into; repeat for several")
	cmd.Flags().StringArrayVar(&o.Helm, "helm", nil, "a Helm chart folder whose values files (its own and its unpacked subcharts') get the lock, in place; repeat for several")
	cmd.Flags().BoolVar(&o.Check, "check", false, "write nothing; exit 1 when a file disagrees with the lock")
	cmd.Flags().BoolVar(&o.Force, "force", false, "replace an override file that pin did not write")
	cmd.Flags().StringVar(&o.Environment, "environment", "", "the environment whose lock is exported (a catalogue with environments)")
	_ = cmd.RegisterFlagCompletionFunc("environment", completeEnvironment(g))
	return cmd
}

// flagExports are the exports the flags name.
func (o *exportOptions) flagExports() catalogue.Export {
	return catalogue.Export{
		Compose:   []catalogue.ComposeExport{{Files: o.compose.Files, ProjectName: o.compose.ProjectName, Profiles: o.compose.Profiles, InPlace: o.InPlace}},
		Manifests: o.Manifests, Kustomize: o.Kustomize, Env: o.Env,
	}
}

func runExport(ctx context.Context, o *exportOptions, s streams) error {
	flags := o.flagExports()
	if len(o.Manifests) > 0 && !o.InPlace {
		return withCode(exitInput, errors.New("--manifests rewrites manifests in place: add --in-place, or use --kustomize DIR"))
	}
	// The Compose files of the flags first: bad input is found before any
	// host is asked.
	var projects []*compose.Project
	if len(o.compose.Files) > 0 {
		p, err := o.compose.load(ctx, s)
		if err != nil {
			return err
		}
		projects = append(projects, p)
	}
	in, err := load(ctx, o.globalOptions, s, "", nil)
	if err != nil {
		return err
	}
	var exp catalogue.Export
	if len(o.Helm) > 0 && !flags.Names() {
		exp = catalogue.Export{} // the charts alone
	} else if exp, err = exportsOf(in.Catalogue, flags, s); err != nil {
		return err
	}
	for _, c := range exp.Compose[len(projects):] {
		p, err := (&composeFlags{Files: c.Files, ProjectName: c.ProjectName, Profiles: c.Profiles}).load(ctx, s)
		if err != nil {
			return err
		}
		projects = append(projects, p)
	}
	env, err := exportEnvironment(in, o, s)
	if err != nil {
		return err
	}
	rep, err := export.Run(ctx, env.Input(o.now()), export.Request{Exports: exp, Projects: projects, Charts: o.Helm}, export.Options{Check: o.Check, Force: o.Force})
	if rep != nil { // the gate has asked what it asks
		requestSummary(o.globalOptions, s, in.Registries)
	}
	if err != nil {
		// A file it would not write over: the JSON says which, too.
		if rep != nil && o.Format == "json" {
			if werr := writeJSON(s.Out, exportReport(rep, o.Check)); werr != nil {
				return werr
			}
		}
		return exportError(err)
	}
	out := exportReport(rep, o.Check)
	if len(rep.Unsafe) > 0 || len(rep.Downgrades) > 0 {
		for _, r := range out.Refused {
			if r.Kind != "file" {
				fmt.Fprintln(s.Err, r.Message)
			}
		}
		if o.Format == "json" {
			if err := writeJSON(s.Out, out); err != nil {
				return err
			}
		}
		if len(rep.Unsafe) > 0 {
			return withCode(exitFindings, errors.New("the lock would downgrade what a host runs, or cannot be ordered against it; nothing written: run pin resolve, or pin plan HOST for the details"))
		}
		return withCode(exitFindings, errors.New("the lock would make a file name an older or unorderable image than it names; nothing written"))
	}
	if o.Format == "json" {
		if err := writeJSON(s.Out, out); err != nil {
			return err
		}
	} else {
		writeExport(s, out)
	}
	return exportVerdict(s, out, rep)
}

// exportEnvironment is the environment whose lock is exported: the one
// --environment names; with no environments, the one lock.
func exportEnvironment(in *source.Inputs, o *exportOptions, s streams) (*source.Env, error) {
	var names []string
	if o.Environment != "" {
		names = []string{o.Environment}
	} else if len(in.Catalogue.Environments) > 0 {
		var known []string
		for _, e := range in.Catalogue.Environments {
			known = append(known, e.Name)
		}
		return nil, withCode(exitInput, fmt.Errorf("the catalogue declares environments, each with its own lock: name the one to export with --environment NAME (%s)", strings.Join(known, ", ")))
	}
	envs, err := environments(in, o.globalOptions, s, names, "")
	if err != nil {
		return nil, err
	}
	return envs[0], nil
}

// exportError maps an export's error to an exit code: its input (2), or
// a host or registry (3, or 2 when the input is at fault there too).
func exportError(err error) error {
	var ie *export.InputError
	var he *export.HostError
	switch {
	case errors.As(err, &ie):
		return withCode(exitInput, err)
	case errors.As(err, &he):
		return hostFailure(he.Host, he.Err, "its floors are not known, nothing written")
	}
	return withCode(sourceCode(err), err)
}

// exportsOf is what export writes: the flags' exports, or the
// catalogue's export block (checked: every path it names is there) with
// the flags' Compose settings. Neither is exit 2.
func exportsOf(cat *catalogue.Catalogue, flags catalogue.Export, s streams) (catalogue.Export, error) {
	exp, err := cat.Export.Override(flags)
	if err != nil {
		return exp, withCode(exitInput, fmt.Errorf("--project-name, --profile or --in-place without --compose: %w", err))
	}
	if flags.Names() {
		return exp, nil
	}
	if !exp.Names() {
		if cat.Export != nil {
			return exp, withCode(exitInput, fmt.Errorf("the catalogue's export block at %s names no file: add compose { files = [\"compose.yaml\"] }, manifests, kustomize or env to it, or name a file with --compose FILE, --manifests DIR, --kustomize DIR or --env FILE", cat.Export.DeclRange))
		}
		return exp, withCode(exitInput, errors.New("export needs an export block in the catalogue (export { compose { files = [\"compose.yaml\"] } }), or --compose FILE, --manifests DIR, --kustomize DIR or --env FILE"))
	}
	if diags := cat.Export.Check(); diags.HasErrors() {
		printDiags(s, cat.Files, diags)
		return exp, withCode(exitInput, fmt.Errorf("the catalogue's export block names what is not there; nothing written: %w", errReported))
	}
	return exp, nil
}

func describeImage(tag, digest string) string {
	switch {
	case tag != "" && digest != "":
		return tag + "@" + digest
	case digest != "":
		return digest
	}
	return tag
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
