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
		return Target{Ref: "refs/heads/" + p.Branch, Branch: true, Options: []string{
			"merge_request.create",
			"merge_request.target=" + p.Base,
			"merge_request.title=" + oneLine(p.Title),
			"merge_request.description=" + strings.ReplaceAll(strings.ReplaceAll(p.Body, "\r", ""), "\n", `\n`),
			"merge_request.remove_source_branch",
		}}, nil
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
}
