package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/atomicfile"
	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/compose"
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
	FromHost  string
	Host      string
	Policy    string
	Digest    bool
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
  --from-host HOST   every container on HOST that no module takes over: an
                     at-least-running module with no pin (the lock records
                     what runs), runs_on HOST by Compose service when Compose
                     made it, else by container name.

With --host H, modules from Compose files and manifests run on H (runs_on
{ compose = "<project>/<service>" }, or { workload, container }). The policy
is at-least-running unless --policy says otherwise. New modules are appended
to the catalogue file (created if absent; in a catalogue folder, init.hcl).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInit(cmd.Context(), o, s)
		},
	}
	o.compose.add(cmd)
	cmd.Flags().StringVar(&o.Manifests, "manifests", "", "a folder of Kubernetes manifests")
	cmd.Flags().StringVar(&o.FromHost, "from-host", "", "a catalogue host whose containers to add")
	cmd.Flags().StringVar(&o.Host, "host", "", "the catalogue host that Compose services and manifests run on")
	cmd.Flags().BoolVar(&o.Digest, "digest", false, "pin Compose and manifest images at tag@digest, the digest each tag names now (asks the registries)")
	cmd.Flags().StringVar(&o.Policy, "policy", string(catalogue.AtLeastRunning), "policy of modules from Compose files and manifests")
	return cmd
}

func runInit(ctx context.Context, o *initOptions, s streams) error {
	if len(o.compose.Files) == 0 && o.Manifests == "" && o.FromHost == "" {
		return withCode(exitInput, errors.New("init needs --compose FILE, --manifests DIR or --from-host HOST"))
	}
	policy := catalogue.Policy(o.Policy)
	if !slices.Contains(catalogue.Policies, policy) {
		return withCode(exitInput, fmt.Errorf("--policy %q: write at-least-running, track-upstream or exact", o.Policy))
	}
	target, srcs, err := catalogueFiles(o.Catalogue)
	if err != nil {
		return withCode(exitInput, err)
	}
	var cat *catalogue.Catalogue
	if len(srcs) > 0 {
		c, diags := catalogue.Parse(srcs...)
		if diags.HasErrors() {
			printDiags(s, c.Files, diags)
			return withCode(exitInput, fmt.Errorf("catalogue %s has errors: %w", o.Catalogue, errReported))
		}
		cat = c
	}
	if o.Host != "" && (cat == nil || cat.Host(o.Host) == nil) {
		return withCode(exitInput, fmt.Errorf("--host %s: the catalogue has no host %q; add host %q { docker = \"unix:///var/run/docker.sock\" } first", o.Host, o.Host, o.Host))
	}

	var cands []scaffold.Candidate
	var skips []scaffold.Skip
	if o.FromHost != "" {
		in, err := load(ctx, o.globalOptions, s, o.FromHost, nil)
		if err != nil {
			return err
		}
		if err, ok := in.Observed.Errors[o.FromHost]; ok {
			return hostFailure(o.FromHost, err, "")
		}
		c, sk := scaffold.FromHost(in.Catalogue, o.FromHost, in.Observed.Snapshots[o.FromHost])
		cands, skips = append(cands, c...), append(skips, sk...)
	}
	if len(o.compose.Files) > 0 {
		p, err := o.compose.load(ctx, s)
		if err != nil {
			return err
		}
		c, sk, err := scaffold.FromCompose(p, o.Host, policy)
		if err != nil {
			return withCode(exitInput, err)
		}
		cands, skips = append(cands, c...), append(skips, sk...)
	}
	if o.Manifests != "" {
		refs, kinds, err := readManifests(o.Manifests)
		if err != nil {
			return err
		}
		c, sk, err := scaffold.FromManifests(refs, kinds, o.Host, policy)
		if err != nil {
			return withCode(exitInput, err)
		}
		cands, skips = append(cands, c...), append(skips, sk...)
	}

	if o.Digest {
		regCat := cat
		if regCat == nil {
			regCat = &catalogue.Catalogue{}
		}
		regs := source.NewRegistries(regCat, o.sourceOptions())
		err := scaffold.AddDigests(ctx, cands, func(ctx context.Context, repo, tag string) (string, error) {
			reg := regs.For(repo)
			if reg == nil {
				return "", errors.New("no registry may be asked (offline?)")
			}
			img, err := reg.Image(ctx, repo, tag, "linux/amd64")
			return img.Digest, err
		})
		if err != nil {
			return withCode(exitSource, err)
		}
	}
	add, more := scaffold.Plan(cat, cands)
	skips = append(skips, more...)
	var old []byte
	for _, src := range srcs {
		if src.Filename == target {
			old = src.Bytes
		}
	}
	rendered := scaffold.Render(old, add)
	// What is written must load: check the whole catalogue with it.
	next := slices.DeleteFunc(slices.Clone(srcs), func(src catalogue.Source) bool { return src.Filename == target })
	next = append(next, catalogue.Source{Filename: target, Bytes: rendered})
	if c, diags := catalogue.Parse(next...); diags.HasErrors() {
		printDiags(s, c.Files, diags)
		return withCode(exitInput, fmt.Errorf("the modules init would add do not load; nothing written: %w", errReported))
	}
	out := initOutput{Schema: JSONSchema, Command: "init", Catalogue: target, Added: []initAdded{}, Skipped: []initSkip{}}
	for _, c := range add {
		a := initAdded{Module: c.Name, Image: c.Image, Policy: string(c.Policy), Pin: c.Pin, From: c.From, Host: c.RunsOn.Host}
		a.Compose, a.Container, a.Workload = c.RunsOn.Compose, c.RunsOn.Container, c.RunsOn.Workload
		out.Added = append(out.Added, a)
	}
	for _, sk := range skips {
		out.Skipped = append(out.Skipped, initSkip{What: sk.What, Why: sk.Why})
	}
	if len(add) > 0 {
		// Appended to the bytes read, written only while the file still
		// holds them: an edit made meanwhile is never lost.
		if _, err := atomicfile.Write(target, rendered, atomicfile.Options{Since: &old}); err != nil {
			switch {
			case errors.Is(err, atomicfile.ErrChanged):
				err = fmt.Errorf("%w: it changed while pin init ran; run pin init again", err)
			case errors.Is(err, atomicfile.ErrDanglingLink):
				err = fmt.Errorf("%w: create the file it names, or remove the link", err)
			}
			return withCode(exitInput, fmt.Errorf("writing catalogue %w; nothing written", err))
		}
		out.Written = true
	}
	if o.Format == "json" {
		return writeJSON(s.Out, out)
	}
	for _, a := range out.Added {
		fmt.Fprintf(s.Out, "added   module %q (%s) from %s\n", a.Module, a.Image, sanitize(a.From))
	}
	for _, sk := range out.Skipped {
		fmt.Fprintf(s.Out, "skipped %s: %s\n", sanitize(sk.What), sanitize(sk.Why))
	}
	if out.Written {
		fmt.Fprintf(s.Out, "Wrote %d module(s) to %s.\n", len(out.Added), target)
	} else {
		fmt.Fprintf(s.Out, "Nothing to add: %s has a module for everything found.\n", target)
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
}

type initAdded struct {
	Module    string `json:"module"`
	Image     string `json:"image"`
	Policy    string `json:"policy"`
	Pin       string `json:"pin,omitempty"`
	Host      string `json:"host,omitempty"`
	Compose   string `json:"compose,omitempty"`
	Workload  string `json:"workload,omitempty"`
	Container string `json:"container,omitempty"`
	From      string `json:"from"`
}

// catalogueFiles returns the file init writes to (the catalogue file, or
// init.hcl in a catalogue folder) and the catalogue's files as they are
// (none when it does not exist yet).
func catalogueFiles(path string) (string, []catalogue.Source, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, nil, nil
	case err != nil:
		return "", nil, err
	case !fi.IsDir():
		b, err := os.ReadFile(path)
		if err != nil {
			return "", nil, err
		}
		return path, []catalogue.Source{{Filename: path, Bytes: b}}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.hcl"))
	if err != nil {
		return "", nil, err
	}
	slices.Sort(files)
	var srcs []catalogue.Source
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", nil, err
		}
		srcs = append(srcs, catalogue.Source{Filename: f, Bytes: b})
	}
	return filepath.Join(path, "init.hcl"), srcs, nil
}

// manifestFiles lists the YAML files under dir, sorted, leaving out
// kustomization files (they configure kustomize; they are not objects).
func manifestFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := filepath.Ext(p)
		if d.IsDir() || (ext != ".yaml" && ext != ".yml") || isKustomization(p) {
			return nil
		}
		files = append(files, p)
		return nil
	})
	slices.Sort(files)
	return files, err
}

func isKustomization(p string) bool {
	b := filepath.Base(p)
	return b == "kustomization.yaml" || b == "kustomization.yml" || b == "Kustomization"
}

// readManifests reads the container images of the manifests under dir,
// and the kind of each object ("deployment/forge" → "Deployment"). A file
// that is not YAML, or a document that is not a Kubernetes object, is bad
// input.
func readManifests(dir string) ([]imageref.Ref, map[string]string, error) {
	files, err := manifestFiles(dir)
	if err != nil {
		return nil, nil, withCode(exitInput, fmt.Errorf("reading manifests: %w", err))
	}
	var refs []imageref.Ref
	kinds := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, withCode(exitInput, err)
		}
		r, objs, err := imageref.ManifestRefs(f, b)
		if err != nil {
			return nil, nil, withCode(exitInput, err)
		}
		for _, o := range objs {
			kinds[strings.ToLower(o.Kind)+"/"+o.Name] = o.Kind
		}
		refs = append(refs, r...)
	}
	return refs, kinds, nil
}
