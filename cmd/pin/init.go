package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/compose"
	"github.com/pin-tool/pin/internal/helmvalues"
	"github.com/pin-tool/pin/internal/imageref"
	"github.com/pin-tool/pin/internal/scaffold"
	"github.com/pin-tool/pin/internal/source"
)

// composeFlags are the flags that say which Compose project to read.
type composeFlags struct {
	Files       []string
	Profiles    []string
	ProjectName string
}

func (c *composeFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&c.Files, "compose", nil, "a Compose file; repeat to merge several, in order, as Compose does")
	cmd.Flags().StringArrayVar(&c.Profiles, "profile", nil, "a Compose profile to activate (default: COMPOSE_PROFILES)")
	cmd.Flags().StringVar(&c.ProjectName, "project-name", "", "the Compose project name (default: as Compose names it)")
}

// load reads the Compose project; bad files are exit 2. What Compose
// would warn about is said on s.Err.
func (c *composeFlags) load(ctx context.Context, s streams) (*compose.Project, error) {
	o := compose.Options{Files: c.Files, ProjectName: c.ProjectName}
	if c.Profiles != nil {
		o.Profiles = c.Profiles
	}
	p, err := compose.Load(ctx, o)
	if err != nil {
		if errors.Is(err, compose.ErrBadInput) || errors.Is(err, fs.ErrNotExist) {
			return nil, withCode(exitInput, err)
		}
		return nil, err
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(s.Err, "pin: compose: warning: %s\n", sanitize(w))
	}
	return p, nil
}

type initOptions struct {
	*globalOptions
	compose   composeFlags
	Manifests string
	Helm      []string
	FromHost  string
	Host      string
	Policy    string
	Digest    bool
	Platform  string
}

func newInitCmd(g *globalOptions, s streams) *cobra.Command {
	o := &initOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "init [--compose FILE]... [--manifests DIR] [--from-host HOST]",
		Short: "Scaffold or extend the catalogue from Compose files, manifests or a host",
		Long: `init adds to the catalogue a module for each image it finds that no module
covers yet, and says what it added and what it skipped, and why. It never
rewrites a module: run it again and it adds only what is missing.

  --compose FILE     Compose files, merged as Compose merges them, with .env
                     and ${VAR:-default} interpolation and --profile. A module
                     per service with an image, named after the service,
                     pinned at the image as written (the tag, or tag@digest;
                     with --digest, the tag and the digest it names now).
                     Services that are only built are skipped.
  --manifests DIR    Kubernetes manifests (and kustomize folders): the images
                     of Deployments, StatefulSets, DaemonSets, CronJobs, Jobs
                     and Pods, init containers included.
  --helm CHART       the images of a Helm chart's values (values.yaml and its
                     unpacked subcharts'), named after their values path
                     (worker.image → worker), pinned at the tag the chart
                     renders (see docs/guides/helm.md).
  --from-host HOST   every container on HOST that no module takes over: an
                     at-least-running module with no pin (the lock records
                     what runs), runs_on HOST by Compose service when Compose
                     made it, else by container name.

With --host H, modules from Compose files and manifests run on H (runs_on
{ compose = "<project>/<service>" }, or { workload, container }). The policy
is at-least-running unless --policy says otherwise. New modules are appended
to the catalogue file (created if absent; in a catalogue folder, init.hcl).

An image with neither tag nor digest is the latest tag it runs as (the
module's comment says so). Two images of one repository are never merged:
each is a module of its own. A module init cannot write so that it loads is
left out on its own, said with what to write; the others are written.
Exit 0: everything found is covered by a module; 1: something was left out
(what could be added was written); 2: bad input, nothing written.

With --digest, each tag is pinned at the digest it names now on the
registry, for --platform: by default the platform every running container
of --from-host runs (when they agree), else linux/amd64.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInit(cmd.Context(), o, s)
		},
	}
	o.compose.add(cmd)
	cmd.Flags().StringVar(&o.Manifests, "manifests", "", "a folder of Kubernetes manifests")
	cmd.Flags().StringArrayVar(&o.Helm, "helm", nil, "a Helm chart folder whose values' images to add (its own and its unpacked subcharts'); repeat for several")
	cmd.Flags().StringVar(&o.FromHost, "from-host", "", "a catalogue host whose containers to add")
	cmd.Flags().StringVar(&o.Host, "host", "", "the catalogue host that Compose services and manifests run on")
	cmd.Flags().BoolVar(&o.Digest, "digest", false, "pin Compose and manifest images at tag@digest, the digest each tag names now (asks the registries)")
	cmd.Flags().StringVar(&o.Platform, "platform", "", "the platform whose digest --digest pins (default: the platform of what --from-host runs, else linux/amd64)")
	cmd.Flags().StringVar(&o.Policy, "policy", string(catalogue.AtLeastRunning), "policy of modules from Compose files and manifests")
	return cmd
}

func runInit(ctx context.Context, o *initOptions, s streams) error {
	if len(o.compose.Files) == 0 && o.Manifests == "" && o.FromHost == "" && len(o.Helm) == 0 {
		return withCode(exitInput, errors.New("init needs --compose FILE, --manifests DIR, --helm CHART or --from-host HOST"))
	}
	policy, err := scaffold.ParsePolicy(o.Policy)
	if err != nil {
		return withCode(exitInput, err)
	}
	cur, err := scaffold.Open(o.Catalogue)
	if err != nil {
		return initError(s, err)
	}
	if err := cur.CheckHost(o.Host); err != nil {
		return withCode(exitInput, err)
	}
	found := scaffold.Found{FromHost: o.FromHost}
	if o.FromHost != "" {
		in, err := load(ctx, o.globalOptions, s, o.FromHost, nil)
		if err != nil {
			return err
		}
		if err, ok := in.Observed.Errors[o.FromHost]; ok {
			return hostFailure(o.FromHost, err, "")
		}
		found.Snapshot = in.Observed.Snapshots[o.FromHost]
	}
	if len(o.compose.Files) > 0 {
		if found.Project, err = o.compose.load(ctx, s); err != nil {
			return err
		}
	}
	if o.Manifests != "" {
		if found.Manifests, found.Kinds, err = imageref.ReadManifests(o.Manifests); err != nil {
			return withCode(exitInput, err)
		}
	}
	for _, dir := range o.Helm {
		c, err := helmvalues.Read(dir)
		if err != nil {
			return withCode(exitInput, err)
		}
		found.Charts = append(found.Charts, c)
	}
	opts := scaffold.Options{Host: o.Host, Policy: policy}
	if o.Digest {
		opts.Digests = o.digests(cur.Catalogue, scaffold.Platform(o.Platform, found.Snapshot))
	}
	rep, err := scaffold.Run(ctx, cur, found, opts)
	if err != nil {
		return initError(s, err)
	}
	return writeInit(s, o.Format, rep)
}

// digests is how --digest asks the registries of cat for the digest a tag
// names now, on platform.
func (o *initOptions) digests(cat *catalogue.Catalogue, platform string) scaffold.Resolver {
	if cat == nil {
		cat = &catalogue.Catalogue{}
	}
	regs := source.NewRegistries(cat, o.sourceOptions())
	return func(ctx context.Context, repo, tag string) (string, error) {
		reg := regs.For(repo)
		if reg == nil {
			return "", errors.New("no registry may be asked (offline?)")
		}
		img, err := reg.Image(ctx, repo, tag, platform)
		return img.Digest, err
	}
}

// initError maps an error of init to an exit code: a registry (3), else
// the input (2); a catalogue that does not load is printed here.
func initError(s streams, err error) error {
	var de *scaffold.DiagnosticsError
	var dg *scaffold.DigestError
	switch {
	case errors.As(err, &de):
		printDiags(s, de.Files, de.Diagnostics)
		return withCode(exitInput, fmt.Errorf("%s: %w", de.Msg, errReported))
	case errors.As(err, &dg):
		return withCode(exitSource, err)
	}
	return withCode(exitInput, err)
}

// writeInit renders what init added and skipped.
func writeInit(s streams, format string, rep *scaffold.Report) error {
	out := initOutput{Schema: JSONSchema, Command: "init", Catalogue: rep.Target, Written: rep.Written, Added: []initAdded{}, Skipped: []initSkip{}}
	for _, c := range rep.Added {
		a := initAdded{Module: c.Name, Image: c.Image, Policy: string(c.Policy), From: c.From, Host: c.RunsOn.Host}
		a.Pin, a.Tag = scaffold.Written(c)
		a.Compose, a.Container, a.Workload = c.RunsOn.Compose, c.RunsOn.Container, c.RunsOn.Workload
		out.Added = append(out.Added, a)
	}
	for _, sk := range rep.Skipped {
		out.Skipped = append(out.Skipped, initSkip{What: sk.What, Why: sk.Why, Left: sk.Left})
	}
	if format == "json" {
		if err := writeJSON(s.Out, out); err != nil {
			return err
		}
		return initLeft(rep)
	}
	for _, a := range out.Added {
		fmt.Fprintf(s.Out, "added   module %q (%s) from %s\n", a.Module, a.Image, sanitize(a.From))
	}
	for _, sk := range out.Skipped {
		word := "skipped"
		if sk.Left {
			word = "left out"
		}
		fmt.Fprintf(s.Out, "%s %s: %s\n", word, sanitize(sk.What), sanitize(sk.Why))
	}
	switch {
	case out.Written:
		fmt.Fprintf(s.Out, "Wrote %d module(s) to %s.\n", len(out.Added), rep.Target)
	case rep.Left() == 0:
		fmt.Fprintf(s.Out, "Nothing to add: %s has a module for everything found.\n", rep.Target)
	default:
		fmt.Fprintf(s.Out, "Nothing written to %s.\n", rep.Target)
	}
	return initLeft(rep)
}

// initLeft is exit 1 when init left out something it read (what it
// could add is written all the same).
func initLeft(rep *scaffold.Report) error {
	if n := rep.Left(); n > 0 {
		return withCode(exitFindings, fmt.Errorf("%d image(s) found were left out of the catalogue; each says why and what to write", n))
	}
	return nil
}

// initOutput is pin init's result, the JSON of --format json.
type initOutput struct {
	Schema    int         `json:"schema"`
	Command   string      `json:"command"`
	Catalogue string      `json:"catalogue"`
	Written   bool        `json:"written"`
	Added     []initAdded `json:"added"`
	Skipped   []initSkip  `json:"skipped"`
}

type initSkip struct {
	What string `json:"what"`
	Why  string `json:"why"`
	// Left: no module covers what was read (exit 1).
	Left bool `json:"left,omitempty"`
}

type initAdded struct {
	Module    string `json:"module"`
	Image     string `json:"image"`
	Policy    string `json:"policy"`
	Pin       string `json:"pin,omitempty"`
	Tag       string `json:"tag,omitempty"`
	Host      string `json:"host,omitempty"`
	Compose   string `json:"compose,omitempty"`
	Workload  string `json:"workload,omitempty"`
	Container string `json:"container,omitempty"`
	From      string `json:"from"`
}
