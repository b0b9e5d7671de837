package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/atomicfile"
	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/compose"
	"github.com/pin-tool/pin/internal/export"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/resolve"
)

type exportOptions struct {
	*globalOptions
	compose   composeFlags
	InPlace   bool
	Manifests []string
	Kustomize []string
	Env       []string
	Check     bool
	Force     bool
}

func newExportCmd(g *globalOptions, s streams) *cobra.Command {
	o := &exportOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "export [--compose FILE]... [--in-place] [--manifests DIR]... [--kustomize DIR]... [--env FILE]... [--check]",
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
                     locked module (module forge → FORGE_IMAGE).

--manifests, --kustomize and --env may be repeated. A flag that names a
file (--compose, --manifests, --kustomize, --env) replaces the export
block whole, as docker compose -f replaces compose.yaml; --project-name,
--profile and --in-place alone change the block's compose settings, as
docker compose -p does.

A module covers a Compose service when it runs_on { compose =
"<project>/<service>" }, a manifest's container when it runs_on that
workload, else when it is the one module with that image repository.

Before writing, export previews the cutover on every host (as pin plan
does): it refuses, exit 1, when the lock would downgrade what a host runs,
or cannot be ordered against it. --check writes nothing and exits 1 when a
file disagrees with the lock. A reference whose tag and digest disagree
with the lock is reported with file:line. A reference a module covers that
export cannot write (a variable, a YAML alias or block scalar, a module not
in the lock) is named, and the run exits 1, --check too.

Writes are atomic, follow symbolic links to the file they name, keep its
mode, and a second run changes nothing. An override file pin did not write
(it lacks pin's header) is never replaced without --force; a file that
changed while export ran is never replaced.`,
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
	cmd.Flags().BoolVar(&o.Check, "check", false, "write nothing; exit 1 when a file disagrees with the lock")
	cmd.Flags().BoolVar(&o.Force, "force", false, "replace an override file that pin did not write")
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
	exp, err := exportsOf(in.Catalogue, flags, s)
	if err != nil {
		return err
	}
	if !flags.Names() {
		for _, c := range exp.Compose {
			p, err := (&composeFlags{Files: c.Files, ProjectName: c.ProjectName, Profiles: c.Profiles}).load(ctx, s)
			if err != nil {
				return err
			}
			projects = append(projects, p)
		}
	}
	cov := export.NewCoverage(in.Catalogue, in.Lock)

	var results []export.Result
	for i, p := range projects {
		if exp.Compose[i].InPlace {
			srcs, err := readFiles(p.Files)
			if err != nil {
				return err
			}
			r, err := export.InPlace(p, cov, srcs)
			if err != nil {
				return withCode(exitInput, err)
			}
			results = append(results, r)
		} else {
			old, err := readIfExists(export.OverridePath(p.Files[0]))
			if err != nil {
				return withCode(exitInput, err)
			}
			results = append(results, export.Override(p, cov, old))
		}
	}
	for _, dir := range exp.Manifests {
		files, err := manifestFiles(dir)
		if err != nil {
			return withCode(exitInput, err)
		}
		srcs, err := readFiles(files)
		if err != nil {
			return err
		}
		r, err := export.Manifests(cov, files, srcs)
		if err != nil {
			return withCode(exitInput, err)
		}
		results = append(results, r)
	}
	for _, dir := range exp.Kustomize {
		refs, _, err := readManifests(dir)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, "kustomization.yaml")
		old, err := os.ReadFile(path)
		if err != nil {
			return withCode(exitInput, fmt.Errorf("reading the kustomization: %w", err))
		}
		r, err := export.Kustomize(path, cov, refs, old)
		if err != nil {
			return withCode(exitInput, err)
		}
		results = append(results, r)
	}
	for _, f := range exp.Env {
		old, err := readIfExists(f)
		if err != nil {
			return withCode(exitInput, err)
		}
		results = append(results, export.Env(f, cov, old))
	}

	// The floor guarantee: what is written must not downgrade what a host
	// runs, by the rules of pin plan.
	modules := map[string]bool{}
	for _, r := range results {
		for _, e := range r.Entries {
			modules[e.Module] = true
		}
	}
	if err := exportFloors(ctx, o, s, in, modules); err != nil {
		return err
	}

	out := exportOutput{Schema: JSONSchema, Command: "export", Check: o.Check, Files: []exportFile{}, References: []exportEntry{}, Skipped: []exportSkip{}, Findings: []exportFinding{}}
	seen := map[string]bool{}
	var files []export.File
	for _, r := range results {
		for _, e := range r.Entries {
			out.References = append(out.References, exportEntry{Where: e.Where, Module: e.Module, Old: e.Old, New: e.New, Changed: e.Old != e.New})
		}
		for _, sk := range r.Skipped {
			out.Skipped = append(out.Skipped, exportSkip{What: sk.What, Why: sk.Why, Unwritten: sk.Unwritten})
		}
		for _, f := range r.Findings {
			out.Findings = append(out.Findings, exportFinding{Where: f.Where, Message: f.Msg})
		}
		for _, f := range r.Files {
			if !seen[f.Path] {
				seen[f.Path] = true
				out.Files = append(out.Files, exportFile{Path: f.Path, Changed: f.Changed()})
				files = append(files, f)
			}
		}
	}
	slices.SortFunc(out.Files, func(a, b exportFile) int { return strings.Compare(a.Path, b.Path) })
	changed, unwritten := 0, 0
	for _, f := range out.Files {
		if f.Changed {
			changed++
		}
	}
	for _, sk := range out.Skipped {
		if sk.Unwritten {
			unwritten++
		}
	}
	// Every file is checked before any is written: a refusal writes none.
	var refused []error
	for _, f := range files {
		if f.Changed() {
			if _, err := atomicfile.Check(f.Path, f.Bytes, f.WriteOptions(o.Force)); err != nil {
				refused = append(refused, explainWrite(err))
			}
		}
	}
	if len(refused) > 0 && !o.Check {
		return withCode(exitInput, fmt.Errorf("%w; nothing written", errors.Join(refused...)))
	}
	if !o.Check {
		for _, f := range files {
			if !f.Changed() {
				continue
			}
			if _, err := atomicfile.Write(f.Path, f.Bytes, f.WriteOptions(o.Force)); err != nil {
				return withCode(exitInput, explainWrite(err))
			}
		}
		for i := range out.Files {
			out.Files[i].Written = out.Files[i].Changed
		}
	}
	if o.Format == "json" {
		if err := writeJSON(s.Out, out); err != nil {
			return err
		}
	} else {
		writeExport(s, out)
	}
	if o.Check && (changed > 0 || len(out.Findings) > 0 || unwritten > 0 || len(refused) > 0) {
		for _, err := range refused {
			fmt.Fprintf(s.Err, "pin: %s\n", sanitize(err.Error()))
		}
		var why []string
		if changed > 0 || len(out.Findings) > 0 {
			why = append(why, fmt.Sprintf("%d file(s) disagree with the lock, %d reference(s) disagree with themselves: run pin export without --check", changed, len(out.Findings)))
		}
		if unwritten > 0 {
			why = append(why, fmt.Sprintf("%d reference(s) a module covers could not be checked: write them as said above", unwritten))
		}
		if len(why) == 0 {
			why = append(why, "a file pin would write is not pin's (said above)")
		}
		return withCode(exitFindings, errors.New(strings.Join(why, "; ")))
	}
	if unwritten > 0 {
		return withCode(exitFindings, fmt.Errorf("%d reference(s) a module covers could not be written (said above); what could be was", unwritten))
	}
	return nil
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

// writeOptions is how export writes f: an override only over pin's own
// (or with --force), a file it edits only while it holds what was read.
// explainWrite adds to a refused write what to do about it.
func explainWrite(err error) error {
	switch {
	case errors.Is(err, atomicfile.ErrNotOwned):
		return fmt.Errorf("%w: it lacks the header pin writes, so a person wrote it; pass --force to replace it, or move it away", err)
	case errors.Is(err, atomicfile.ErrChanged):
		return fmt.Errorf("%w: it changed while pin export ran; run pin export again", err)
	case errors.Is(err, atomicfile.ErrDanglingLink):
		return fmt.Errorf("%w: create the file it names, or remove the link", err)
	}
	return fmt.Errorf("writing %w", err)
}

// exportFloors previews the cutover of the exported modules on every host
// that answered, and refuses a downgrade or an unknown order. A host that
// could not be read is an error: its floors are not known.
func exportFloors(ctx context.Context, o *exportOptions, s streams, in *source.Inputs, modules map[string]bool) error {
	hosts := map[string]bool{}
	for _, m := range in.Catalogue.Modules {
		if !modules[m.Name] {
			continue
		}
		for _, ro := range m.RunsOn {
			hosts[ro.Host] = true
		}
	}
	names := make([]string, 0, len(hosts))
	for h := range hosts {
		names = append(names, h)
	}
	slices.Sort(names)
	var bad []string
	for _, h := range names {
		if err, ok := in.Observed.Errors[h]; ok {
			code := exitSource
			if badInput(err) {
				code = exitInput
			}
			return withCode(code, fmt.Errorf("host %s: %w; its floors are not known, nothing written", h, err))
		}
		cuts, err := resolve.PlanCutover(ctx, resolve.Input{Catalogue: in.Catalogue, Old: in.Lock, Observed: in.Observed, Registry: in.Registries.For, Verifier: in.Registries.Verifier, Now: o.now(), Host: h})
		if err != nil {
			if badInput(err) {
				return withCode(exitInput, err)
			}
			return withCode(exitSource, err)
		}
		for _, c := range cuts {
			if !modules[c.Module] || c.Safe() {
				continue
			}
			bad = append(bad, fmt.Sprintf("%s/%s (module %s): %s: runs %s, the lock names %s", h, c.Observation.Container, c.Module, strings.ToUpper(string(c.Verdict)),
				describeImage(c.Observation.Image.Tag, c.Observation.Image.Digest), c.Locked.Ref()))
		}
	}
	requestSummary(o.globalOptions, s, in.Registries)
	if len(bad) > 0 {
		for _, b := range bad {
			fmt.Fprintln(s.Err, sanitize(b))
		}
		return withCode(exitFindings, errors.New("the lock would downgrade what a host runs, or cannot be ordered against it; nothing written: run pin resolve, or pin plan HOST for the details"))
	}
	return nil
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

// readFiles reads each of paths, by path; a file that cannot be read is
// exit 2.
func readFiles(paths []string) (map[string][]byte, error) {
	srcs := make(map[string][]byte, len(paths))
	for _, f := range paths {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, withCode(exitInput, err)
		}
		srcs[f] = b
	}
	return srcs, nil
}

func readIfExists(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}
