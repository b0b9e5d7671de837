package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/spf13/cobra"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/forge"
	forgegitea "github.com/pin-tool/pin/internal/forge/gitea"
	forgegithub "github.com/pin-tool/pin/internal/forge/github"
	"github.com/pin-tool/pin/internal/git"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/propose"
	"github.com/pin-tool/pin/internal/source"
	"github.com/pin-tool/pin/lock"
	"github.com/pin-tool/pin/resolve"
)

type proposeOptions struct {
	*globalOptions
	Remote, Base, BranchPrefix string
	Forge, ForgeURL            string
	Repository, TokenEnv       string
	Split                      string
	Groups                     []string
	Template, BodyFile         string
	DryRun                     bool
	Force                      bool
	// Exports are what the --export-* flags name; ExportCompose their
	// Compose project.
	Exports       propose.Exports
	ExportCompose propose.ComposeExport
	Modules       []string
	// Environment is the environment whose lock is proposed: needed,
	// and only allowed, when the catalogue declares environments.
	Environment string
	// Promote, Pick and Reason: --promote FROM proposes the promotion
	// from FROM to Environment (as pin promote FROM TO, --pick, --reason).
	Promote, Pick, Reason string
	// Labels, Reviewers, Assignees and Automerge hand the request over
	// (instead of the catalogue's propose block, where given).
	Labels, Reviewers, Assignees []string
	Automerge                    bool
	// automergeSet is --automerge when given.
	automergeSet *bool
}

func newProposeCmd(g *globalOptions, s streams) *cobra.Command {
	o := &proposeOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "propose [MODULE...]",
		Short: "Carry the safe update to a pull or merge request",
		Long: `propose runs in a clean git checkout. It fetches the base branch (the
remote's default, or --base), resolves the catalogue there as pin resolve
does, writes the lock and the exports the repository declares (the
catalogue's export block, as pin export writes them), checks the
result with the cutover gate of pin plan against every host, and commits
exactly those files on the fresh base, on a branch named from the group
(pin/update). The branch is pushed with --force-with-lease, and not at all
when the remote already holds the same result. Modules pin refuses are
listed in the body and left as they are. The checkout itself is never
touched: the work happens in a temporary work tree.

--forge opens the request: none (push the branch only), gitlab (GitLab's
merge request push options), agit (Gitea and Forgejo: refs/for/<base>/<topic>),
gerrit (refs/for/<base>), all with push rights alone; github or gitea
through their APIs, with a token ($GITHUB_TOKEN, $GITEA_TOKEN, or
--token-env), finding pin's own open request by its marker and updating it.

The export block is read as the base has it. An --export-* flag that
names a file (--export-compose, --export-manifests, --export-kustomize,
--export-env) replaces it whole; --export-project-name, --export-profile
and --export-in-place alone change its compose settings.

--environment TO --promote FROM proposes a promotion: TO's lock takes
the build every host of FROM that runs each module runs, decided as
pin promote FROM TO [MODULE...] decides it (the same refusals, the same
provenance and release, --pick and --reason for a manual pick, a hold),
and the request is the approval. Modules promoted together are one unit:
a refusal proposes nothing (exit 1), and --split and --group are
refused. The branch is pin/promote-FROM-TO.

--label, --reviewer and --assignee hand the request over (github, gitea;
gitlab takes labels and assignees), and --automerge asks the forge to
merge it once its required checks pass: never for a request that holds
a refusal, a downgrade the catalogue accepts, or a promotion. The
catalogue's propose block says the same, and its schedule the windows
in which pin propose pushes: outside them it computes, pushes nothing
and says when the next window opens. The body says what changed
upstream, from the images' labels (source, revision, version), with
the release notes of the forge pin proposes to.`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: completeModules(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				o.Modules = args
			}
			if cmd.Flags().Changed("automerge") {
				on := o.Automerge
				o.automergeSet = &on
			}
			return runPropose(cmd.Context(), o, s)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Environment, "environment", "", "the environment whose lock is proposed (a catalogue with environments): its lock file is the one the pull request changes")
	_ = cmd.RegisterFlagCompletionFunc("environment", completeEnvironment(g))
	f.StringVar(&o.Promote, "promote", "", "propose the promotion from this environment to --environment's (as pin promote FROM TO writes it)")
	_ = cmd.RegisterFlagCompletionFunc("promote", completeEnvironment(g))
	f.StringVar(&o.Pick, "pick", "", "with --promote: promote this image (sha256:<digest> or <tag>@sha256:<digest>) for the one module named, and hold it")
	f.StringVar(&o.Reason, "reason", "", "with --pick: why, kept in the lock as the hold")
	f.StringVar(&o.Remote, "remote", "origin", "the git remote to fetch the base from and push to")
	f.StringVar(&o.Base, "base", "", "the branch to propose for (default: the remote's default branch)")
	f.StringVar(&o.BranchPrefix, "branch-prefix", "pin/", "what pin's branch names start with")
	f.StringVar(&o.Forge, "forge", "none", "how to open the request: none, gitlab, agit, gerrit, github or gitea")
	f.StringVar(&o.ForgeURL, "forge-url", "", "the forge's API (github: default $GITHUB_API_URL, else https://api.github.com/) or address (gitea: default from an http(s) remote)")
	f.StringVar(&o.Repository, "repository", "", "OWNER/NAME on the forge (default: $GITHUB_REPOSITORY for github, else from the remote's URL)")
	f.StringVar(&o.TokenEnv, "token-env", "", "the environment variable holding the API token (default: GITHUB_TOKEN, then GH_TOKEN, for github; GITEA_TOKEN for gitea)")
	f.StringVar(&o.Split, "split", "none", "one proposal per run (none) or per module (module)")
	f.StringArrayVar(&o.Groups, "group", nil, "a named group proposed together, NAME=MODULE,MODULE…; repeat for several")
	f.StringVar(&o.Template, "template", "", "a Go text/template file for the commit message over the proposal (first line: the title)")
	f.StringVar(&o.BodyFile, "body-file", "", "also write each proposal's body (Markdown) to this file")
	f.BoolVar(&o.Force, "force", false, "replace a --body-file that holds no proposal pin wrote")
	f.BoolVar(&o.DryRun, "dry-run", false, "commit in a temporary work tree and print the proposal; push nothing, ask no forge")
	f.StringArrayVar(&o.ExportCompose.Files, "export-compose", nil, "a Compose file to export to (as pin export --compose); repeat to merge several")
	f.StringVar(&o.ExportCompose.ProjectName, "export-project-name", "", "the Compose project name of --export-compose (or of the export block's compose block)")
	f.StringArrayVar(&o.ExportCompose.Profiles, "export-profile", nil, "a Compose profile of --export-compose (or of the export block's compose blocks)")
	f.BoolVar(&o.ExportCompose.InPlace, "export-in-place", false, "rewrite the Compose files' image: values instead of writing the override")
	f.StringArrayVar(&o.Exports.Manifests, "export-manifests", nil, "a folder of Kubernetes manifests to rewrite in place; repeat for several")
	f.StringArrayVar(&o.Exports.Kustomize, "export-kustomize", nil, "a kustomize folder whose kustomization.yaml gets images: entries; repeat for several")
	f.StringArrayVar(&o.Exports.Env, "export-env", nil, "an env file of NAME_IMAGE= lines; repeat for several")
	f.StringArrayVar(&o.Labels, "label", nil, "a label of the request (instead of the catalogue's propose block); repeat for several")
	f.StringArrayVar(&o.Reviewers, "reviewer", nil, "a user asked to review the request (instead of the catalogue's); repeat for several")
	f.StringArrayVar(&o.Assignees, "assignee", nil, "a user the request is assigned to (instead of the catalogue's); repeat for several")
	f.BoolVar(&o.Automerge, "automerge", false, "ask the forge to merge the request once its required checks pass (never one holding a refusal or an accepted downgrade); --automerge=false overrides the catalogue")
	return cmd
}

func runPropose(ctx context.Context, o *proposeOptions, s streams) (err error) {
	red := o.redactor(ctx)
	s = streams{In: s.In, Out: red.Writer(s.Out), Err: red.Writer(s.Err)}
	defer func() { err = red.Error(err) }()
	if o.BodyFile != "" {
		if err := propose.CheckBodyFile(o.BodyFile, o.Force); err != nil {
			return withCode(exitInput, err)
		}
	}
	po, deps, err := o.wire(ctx, s)
	if err != nil {
		return err
	}
	res, err := propose.Run(ctx, po, deps)
	if err != nil {
		return proposeError(err, res, s)
	}
	if o.BodyFile != "" {
		if err := propose.WriteBodyFile(o.BodyFile, res.Proposals, o.Force); err != nil {
			return withCode(exitInput, err)
		}
	}
	if o.Format == "json" {
		out := proposeOutput{Schema: JSONSchema, Command: "propose", Remote: res.Remote, Base: res.Base, BaseCommit: res.BaseCommit,
			DryRun: res.DryRun, Proposals: nonNil(res.Proposals), Refused: nonNil(res.Refused), Cooling: nonNil(coolingOf(res.Plan))}
		if res.Outside != nil {
			out.Outside = &proposeOutside{Windows: res.Outside.Windows, Next: formatNext(res.Outside.Next)}
		}
		if err := writeJSON(s.Out, out); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		writePropose(&b, res, o.Promote != "")
		if _, err := io.WriteString(s.Out, sanitize(b.String())); err != nil {
			return err
		}
	}
	if len(res.Refused) > 0 {
		var names []string
		for _, r := range res.Refused {
			names = append(names, fmt.Sprintf("%q", r.Module))
		}
		if o.Promote != "" {
			return withCode(exitFindings, fmt.Errorf("refused to promote %s from %s to %s: modules promoted together are one unit, so nothing was proposed or pushed", joinAnd(names), o.Promote, o.Environment))
		}
		return withCode(exitFindings, fmt.Errorf("refused module %s, left as the base has it; the others were proposed", joinAnd(names)))
	}
	return nil
}

// wire turns the flags into the run's options and adapters.
func (o *proposeOptions) wire(ctx context.Context, s streams) (propose.Options, propose.Deps, error) {
	wd, err := os.Getwd()
	if err != nil {
		return propose.Options{}, propose.Deps{}, err
	}
	exports := o.Exports
	exports.Compose = []propose.ComposeExport{o.ExportCompose}
	// With --environment NAME, the lock the proposal changes is that
	// environment's, beside --lock.
	po := propose.Options{Dir: wd, Catalogue: o.Catalogue, Lock: source.LockPath(o.Lock, o.Environment), Exports: exports, Remote: o.Remote, Base: o.Base,
		BranchPrefix: o.BranchPrefix, Modules: o.Modules, Split: propose.Split(o.Split), DryRun: o.DryRun, Now: o.now(),
		Labels: o.Labels, Reviewers: o.Reviewers, Assignees: o.Assignees, Automerge: o.automergeSet}
	for _, spec := range o.Groups {
		name, mods, ok := strings.Cut(spec, "=")
		if !ok || name == "" || mods == "" {
			return po, propose.Deps{}, withCode(exitInput, fmt.Errorf("--group %q: write NAME=MODULE,MODULE…", spec))
		}
		po.Groups = append(po.Groups, propose.Group{Name: name, Modules: strings.Split(mods, ",")})
	}
	if o.Template != "" {
		t, err := template.New(filepath.Base(o.Template)).Option("missingkey=error").ParseFiles(o.Template)
		if err != nil {
			return po, propose.Deps{}, withCode(exitInput, fmt.Errorf("--template: %w", err))
		}
		po.Template = t
	}
	g := git.Git{}
	if err := o.wirePromotion(&po); err != nil {
		return po, propose.Deps{}, err
	}
	deps := propose.Deps{Git: g, Promote: o.promoter(s), Load: func(ctx context.Context, cat, lk string) (*source.Inputs, error) {
		opts := *o.globalOptions
		opts.Catalogue, opts.Lock = cat, lk
		in, err := load(ctx, &opts, s, "", nil)
		if err != nil {
			return nil, err
		}
		// lk is the environment's own lock file: the proposal is its
		// environment's, against its hosts.
		if o.Environment == "" && len(in.Catalogue.Environments) > 0 {
			return nil, withCode(exitInput, fmt.Errorf("the catalogue declares environments, each with its own lock: name the one to propose with --environment NAME"))
		}
		run, err := in.SelectTarget(source.Target{Lock: lk, Own: true, Environment: o.Environment, Now: o.now()})
		if err != nil {
			return nil, withCode(exitInput, err)
		}
		if err := lockRefusal(run); err != nil {
			return nil, err
		}
		return run.Envs[0].Inputs, nil
	}}
	switch o.Forge {
	case "none", "":
		po.Convention = forge.ConventionBranch
	case "gitlab", "agit", "gerrit":
		po.Convention = forge.Convention(o.Forge)
	case "github", "gitea":
		po.Convention = forge.ConventionBranch
		if !o.DryRun {
			api, err := o.requests(ctx, g, wd)
			if err != nil {
				return po, deps, err
			}
			deps.Requests, deps.Releases = api, api
		}
	default:
		return po, deps, withCode(exitInput, fmt.Errorf("--forge %q: write none, gitlab, agit, gerrit, github or gitea", o.Forge))
	}
	return po, deps, nil
}

// forgeAPI is a forge's API: the repository's requests, and the
// releases of repositories on the same forge.
type forgeAPI interface {
	propose.Requests
	propose.Releases
}

var (
	_ forgeAPI = (*forgegitea.Requests)(nil)
	_ forgeAPI = (*forgegithub.Requests)(nil)
)

// requests is the API of --forge github or gitea for the repository.
func (o *proposeOptions) requests(ctx context.Context, g git.Git, wd string) (forgeAPI, error) {
	envs := []string{"GITEA_TOKEN"}
	if o.Forge == "github" {
		envs = []string{"GITHUB_TOKEN", "GH_TOKEN"}
	}
	if o.TokenEnv != "" {
		envs = []string{o.TokenEnv}
	}
	token := ""
	for _, e := range envs {
		if token = os.Getenv(e); token != "" {
			break
		}
	}
	if token == "" {
		return nil, withCode(exitInput, fmt.Errorf("--forge %s needs an API token in $%s", o.Forge, strings.Join(envs, " or $")))
	}
	repo, api := o.Repository, o.ForgeURL
	if o.Forge == "github" {
		if repo == "" {
			repo = os.Getenv("GITHUB_REPOSITORY")
		}
		if api == "" {
			api = os.Getenv("GITHUB_API_URL")
		}
	}
	if repo == "" || api == "" && o.Forge == "gitea" {
		url, err := g.RemoteURL(ctx, wd, o.Remote)
		if err != nil {
			return nil, withCode(exitInput, fmt.Errorf("reading remote %s: %w", o.Remote, err))
		}
		r, err := forge.ParseRemote(url)
		if err != nil {
			return nil, withCode(exitInput, err)
		}
		if repo == "" {
			repo = r.Owner + "/" + r.Name
		}
		if api == "" {
			if r.Web == "" {
				return nil, withCode(exitInput, fmt.Errorf("remote %s is not an http(s) URL: name Gitea's address with --forge-url", o.Remote))
			}
			api = r.Web
		}
	}
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, withCode(exitInput, fmt.Errorf("--repository %q: write OWNER/NAME", repo))
	}
	client := &http.Client{Timeout: o.Timeout}
	if o.Forge == "gitea" {
		return forgegitea.New(api, token, owner, name, client), nil
	}
	r, err := forgegithub.New(api, token, owner, name, client)
	if err != nil {
		return nil, withCode(exitInput, err)
	}
	return r, nil
}

// proposeError maps a run's error to an exit code.
func proposeError(err error, res *propose.Result, s streams) error {
	var ee *exitError
	var dirty *propose.DirtyError
	var foreign *propose.ForeignBranchError
	var gate *propose.ExportGateError
	switch {
	case errors.As(err, &ee):
		return err
	case errors.As(err, &dirty):
		return withCode(exitInput, err)
	case errors.As(err, &foreign), errors.As(err, &gate):
		return withCode(exitFindings, err)
	case errors.Is(err, propose.ErrFailed) && res != nil && res.Plan != nil && res.Plan.Failed():
		return withCode(failureCode(res.Plan), fmt.Errorf("%s; nothing proposed", failures(res.Plan)))
	case errors.Is(err, propose.ErrRemote):
		return withCode(exitSource, err)
	}
	return withCode(exitInput, err)
}

// proposeOutput is pin propose --format json (docs/schema/propose.schema.json).
type proposeOutput struct {
	Schema     int                 `json:"schema"`
	Command    string              `json:"command"`
	Remote     string              `json:"remote"`
	Base       string              `json:"base"`
	BaseCommit string              `json:"base_commit"`
	DryRun     bool                `json:"dry_run"`
	Proposals  []*propose.Proposal `json:"proposals"`
	Refused    []propose.Refused   `json:"refused"`
	// Cooling are the upstream tags not proposed yet because they cool
	// down (min_age).
	Cooling []proposeCooling `json:"cooling"`
	// Outside is the schedule the run was outside of, when it was.
	Outside *proposeOutside `json:"outside_schedule,omitempty"`
}

// proposeOutside is a schedule outside of which nothing was pushed.
type proposeOutside struct {
	Windows string `json:"windows"`
	// Next is when the next window opens (RFC 3339), "" when never.
	Next string `json:"next"`
}

// formatNext is when a window opens, for people and JSON: "" for never.
func formatNext(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// writePropose renders a run for people.
func writePropose(w io.Writer, res *propose.Result, promoting bool) {
	fmt.Fprintf(w, "Proposing for %s/%s at %s.\n", res.Remote, res.Base, short12(res.BaseCommit))
	for _, p := range res.Proposals {
		fmt.Fprintf(w, "\n%s: %s\n", p.Branch, p.Title)
		width := 0
		for _, m := range p.Modules {
			width = max(width, len(m.Name))
		}
		for _, m := range p.Modules {
			fmt.Fprintf(w, "  %-*s  %s → %s  %s\n", width, m.Name, m.From.Label(), m.To.Label(), m.Verdict)
			if m.Why != "" {
				fmt.Fprintf(w, "  %-*s  why: %s\n", width, "", m.Why)
			}
		}
		writePromotionProposal(w, p)
		fmt.Fprintf(w, "  files    %s\n", strings.Join(p.Files, ", "))
		fmt.Fprintf(w, "  commit   %s\n", short12(p.Commit))
		switch p.Outcome {
		case propose.OutcomePushed:
			fmt.Fprintf(w, "  pushed   %s (%s)\n", p.Push.Ref, p.Push.Status)
			for _, l := range p.Push.Remote {
				fmt.Fprintf(w, "  remote   %s\n", l)
			}
		case propose.OutcomeUpToDate:
			fmt.Fprintf(w, "  pushed   nothing: %s already holds this proposal\n", res.Remote)
		case propose.OutcomeDryRun:
			fmt.Fprintf(w, "  pushed   nothing (--dry-run)\n")
		case propose.OutcomeDeclined:
			fmt.Fprintf(w, "  pushed   nothing: request #%d with this very result was closed; a new result will be proposed\n", p.Request.Number)
		case propose.OutcomeOutsideSchedule:
			fmt.Fprintf(w, "  pushed   nothing: outside the schedule\n")
		}
		if h := p.Handover; h.Automerge {
			fmt.Fprintf(w, "  merge    automerge: the forge merges it once its required checks pass\n")
		} else if h.Held != "" {
			fmt.Fprintf(w, "  merge    by a person, not automerge: %s\n", h.Held)
		}
		if p.Outcome == propose.OutcomeDeclined {
			continue
		}
		if p.Request != nil {
			fmt.Fprintf(w, "  request  #%d %s: %s\n", p.Request.Number, p.Request.Action, p.Request.URL)
		}
	}
	if len(res.Refused) > 0 {
		fmt.Fprintf(w, "\nRefused, not changed:\n")
		for _, r := range res.Refused {
			fmt.Fprintf(w, "%s\n", r.Message)
		}
	}
	writeCooling(w, res.Plan)
	fmt.Fprintln(w)
	pushed := 0
	for _, p := range res.Proposals {
		if p.Outcome == propose.OutcomePushed {
			pushed++
		}
	}
	switch {
	case len(res.Proposals) == 0 && len(res.Refused) > 0 && promoting:
		fmt.Fprintln(w, "Refused: a promotion is one unit; nothing proposed, nothing pushed.")
	case len(res.Proposals) == 0 && promoting:
		fmt.Fprintln(w, "No change: the lock already holds what the promotion writes. Nothing pushed.")
	case len(res.Proposals) == 0:
		fmt.Fprintln(w, "No change: the lock and its exports are what pin resolve writes. Nothing pushed.")
	case res.DryRun:
		fmt.Fprintf(w, "%d proposal(s), dry run: nothing pushed.\n", len(res.Proposals))
	case res.Outside != nil && res.Outside.Next.IsZero():
		fmt.Fprintf(w, "Outside the schedule %s: nothing pushed, and no window of it ever opens.\n", res.Outside.Windows)
	case res.Outside != nil:
		fmt.Fprintf(w, "Outside the schedule %s: nothing pushed; the next window opens at %s.\n", res.Outside.Windows, res.Outside.Next.Format("2006-01-02 15:04 MST"))
	case pushed == 0:
		fmt.Fprintf(w, "Nothing pushed: %s already holds every proposal.\n", res.Remote)
	default:
		fmt.Fprintf(w, "%d of %d proposal(s) pushed.\n", pushed, len(res.Proposals))
	}
}

func short12(s string) string {
	s = strings.TrimPrefix(s, "sha256:")
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// proposeCooling is an upstream tag a module did not take because it
// cools down (min_age), and until when.
type proposeCooling struct {
	Module string `json:"module"`
	Tag    string `json:"tag"`
	Digest string `json:"digest"`
	Until  string `json:"until"`
	MinAge string `json:"min_age"`
}

// coolingOf are the plan's upstream candidates skipped because they cool
// down, by module in plan order.
func coolingOf(p *resolve.Plan) []proposeCooling {
	if p == nil {
		return nil
	}
	var out []proposeCooling
	for _, d := range p.Decisions {
		for _, s := range d.Skipped {
			if !s.CoolingUntil.IsZero() {
				out = append(out, proposeCooling{Module: d.Module.Name, Tag: s.Image.Tag, Digest: s.Image.Digest, Until: lock.FormatTime(s.CoolingUntil), MinAge: catalogue.FormatAge(d.Module.MinAge)})
			}
		}
	}
	return out
}

// writeCooling lists the upstream tags the plan did not take because they
// cool down (min_age), and until when: a proposal that leaves a module as
// it is, or takes an older tag, says why.
func writeCooling(w io.Writer, p *resolve.Plan) {
	for i, c := range coolingOf(p) {
		if i == 0 {
			fmt.Fprintf(w, "\nCooling down, not proposed yet:\n")
		}
		fmt.Fprintf(w, "  %s: %s cools down until %s (min_age %s)\n", c.Module, refText(c.Tag, image.Short(c.Digest)), c.Until, c.MinAge)
	}
}
