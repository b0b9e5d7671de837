package forge

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// Proposal is what a convention and an API need to know of a proposal.
type Proposal struct {
	// Base is the branch the proposal is for ("main").
	Base string
	// Branch is pin's branch for it ("pin/update"): the pushed branch, or
	// the topic a magic ref names.
	Branch string
	// Title is one line; Body is Markdown.
	Title, Body string
	// Handover is who and what the request is handed to.
	Handover Handover
}

// Handover is who and what a request is handed to: its labels, the
// people asked to review it and those it is assigned to, and whether the
// forge merges it once its required checks pass.
type Handover struct {
	Labels, Reviewers, Assignees []string
	Automerge                    bool
}

// Empty reports whether h hands the request to nobody and nothing.
func (h Handover) Empty() bool {
	return len(h.Labels) == 0 && len(h.Reviewers) == 0 && len(h.Assignees) == 0 && !h.Automerge
}

// Topic is the branch as a topic name: one path segment ("pin-update").
func (p Proposal) Topic() string { return strings.ReplaceAll(p.Branch, "/", "-") }

// Target is where a proposal's commit is pushed, and how.
type Target struct {
	// Ref is the remote ref pushed to.
	Ref string
	// Options are the git push options, "key=value" each.
	Options []string
	// Branch: Ref is a branch pin owns. It is pushed with a lease on what
	// it named when read, and a commit it names is the proposal pushed
	// before.
	Branch bool
	// Seen are ls-remote patterns of the refs where the forge keeps what
	// a magic ref received (a request's head): a commit found there is
	// the proposal, pushed before.
	Seen []string
}

// Convention is how a push opens a request.
type Convention string

// The push conventions.
const (
	// ConventionBranch pushes the branch alone.
	ConventionBranch Convention = "branch"
	// ConventionGitLab pushes the branch with GitLab's merge request
	// push options.
	ConventionGitLab Convention = "gitlab"
	// ConventionAGit pushes to refs/for/<base>/<topic> (Gitea, Forgejo).
	ConventionAGit Convention = "agit"
	// ConventionGerrit pushes to refs/for/<base> with a topic.
	ConventionGerrit Convention = "gerrit"
)

// Target is where c pushes p.
func (c Convention) Target(p Proposal) (Target, error) {
	if p.Base == "" || p.Branch == "" {
		return Target{}, fmt.Errorf("a proposal needs a base and a branch")
	}
	switch c {
	case ConventionBranch:
		return Target{Ref: "refs/heads/" + p.Branch, Branch: true}, nil
	case ConventionGitLab:
		// Push options cannot hold a new line; GitLab reads "\n" in the
		// description as one.
		opts := []string{
			"merge_request.create",
			"merge_request.target=" + p.Base,
			"merge_request.title=" + oneLine(p.Title),
			"merge_request.description=" + strings.ReplaceAll(strings.ReplaceAll(p.Body, "\r", ""), "\n", `\n`),
			"merge_request.remove_source_branch",
		}
		for _, l := range p.Handover.Labels {
			opts = append(opts, "merge_request.label="+oneLine(l))
		}
		for _, a := range p.Handover.Assignees {
			opts = append(opts, "merge_request.assign="+oneLine(a))
		}
		return Target{Ref: "refs/heads/" + p.Branch, Branch: true, Options: opts}, nil
	case ConventionAGit:
		// Gitea and Forgejo decode "{base64}" values; a request already
		// open for the topic moves to the new commit only with force-push
		// (it is rebuilt on the base, not a fast-forward).
		return Target{Ref: "refs/for/" + p.Base + "/" + p.Topic(), Seen: []string{"refs/pull/*/head"}, Options: []string{
			"topic=" + p.Topic(),
			"title={base64}" + base64.StdEncoding.EncodeToString([]byte(oneLine(p.Title))),
			"description={base64}" + base64.StdEncoding.EncodeToString([]byte(p.Body)),
			"force-push=true",
		}}, nil
	case ConventionGerrit:
		return Target{Ref: "refs/for/" + p.Base, Seen: []string{"refs/changes/*"}, Options: []string{"topic=" + p.Topic()}}, nil
	}
	return Target{}, fmt.Errorf("unknown push convention %q: write branch, gitlab, agit or gerrit", string(c))
}

// Carries reports whether a push by c alone can hand a request over as h
// says, and if not, why: the branch, AGit and Gerrit conventions carry
// none of it (an API does: --forge github or gitea); GitLab's push
// options carry labels and assignees, but neither reviewers nor an
// automerge that a later push could take back.
func (c Convention) Carries(h Handover) error {
	switch {
	case h.Empty():
		return nil
	case c == ConventionGitLab && len(h.Reviewers) > 0:
		return fmt.Errorf("GitLab's push options cannot ask for reviewers: leave out the reviewers, or name them in the repository's CODEOWNERS or approval rules")
	case c == ConventionGitLab && h.Automerge:
		return fmt.Errorf("GitLab's push options can set merge when the pipeline succeeds but never take it back, and pin must take it back from a request that comes to hold a downgrade or a refusal: leave out automerge with --forge gitlab")
	case c == ConventionGitLab:
		return nil
	}
	return fmt.Errorf("the %s convention opens no request pin can hand over (labels, reviewers, assignees, automerge): use --forge github or gitea (their APIs), or gitlab for labels and assignees", string(c))
}

// oneLine is s up to its first line break.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}

// Request is a pull or merge request as a forge's API gives it.
type Request struct {
	Number int
	URL    string
	// Base is the branch it is for; Branch the branch it proposes.
	Base, Branch string
	Title, Body  string
	// State is "open", "closed" (not merged) or "merged".
	State string
	// Labels, Reviewers (asked, not yet answered) and Assignees are the
	// request's, as the forge lists them.
	Labels, Reviewers, Assignees []string
}

// Release is a release of a repository on a forge: its tag, name, notes
// (Markdown, as its authors wrote them) and web page.
type Release struct {
	Tag, Name, Notes, URL string
	Draft, Prerelease     bool
}
