package propose

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pin-tool/pin/internal/forge"
	"github.com/pin-tool/pin/internal/git"
)

// deliver pushes p's commit where the convention says, unless the remote
// holds it already, and opens or updates its request through the API,
// handed over as p.Handover says. Outside the schedule it pushes nothing
// and asks no forge.
func (r *run) deliver(ctx context.Context, p *Proposal) error {
	hand := forge.Handover{Labels: p.Handover.Labels, Reviewers: p.Handover.Reviewers, Assignees: p.Handover.Assignees, Automerge: p.Handover.Automerge}
	fp := forge.Proposal{Base: p.Base, Branch: p.Branch, Title: p.Title, Body: p.Body, Handover: hand}
	target, err := r.o.Convention.Target(fp)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	info, err := r.d.Git.Show(ctx, r.wt, p.Commit)
	if err != nil {
		return err
	}
	held, lease, err := r.held(ctx, target, p, info)
	if err != nil {
		return err
	}
	if r.o.DryRun {
		p.Outcome = OutcomeDryRun
		return nil
	}
	if out := r.outside(); out != nil {
		p.Outcome = OutcomeOutsideSchedule
		r.res.Outside = out
		return nil
	}
	var reqs []forge.Request
	var found *forge.Request
	auto := false
	if r.d.Requests != nil {
		if reqs, err = r.d.Requests.List(ctx, fp.Base, fp.Branch); err != nil {
			return fmt.Errorf("%w: listing the requests from %s: %w", ErrRemote, fp.Branch, err)
		}
		// A person closed the request of this very result: it is not
		// proposed again, week after week; a new result is.
		for _, q := range reqs {
			if lk, ok := markedFor(q.Body, p.Group, p.Base); ok && lk == p.Lock && q.State == "closed" {
				p.Outcome = OutcomeDeclined
				p.Request = &Request{Number: q.Number, URL: q.URL, Action: "closed"}
				return nil
			}
		}
		// Automerge is read, set and taken back only where it is asked
		// for: a token without the scopes for it serves a run that
		// does not.
		if found = pinsOpen(reqs, p.Group, p.Base); found != nil && r.set.hand.Automerge {
			if auto, err = r.d.Requests.Automerge(ctx, found.Number); err != nil {
				return fmt.Errorf("%w: %w", ErrRemote, err)
			}
			// Taken back before the push: the forge must never merge
			// a commit a person has to merge.
			if auto && !p.Handover.Automerge {
				if err := r.d.Requests.SetAutomerge(ctx, found.Number, false); err != nil {
					return fmt.Errorf("%w: taking automerge back from request %d: %w", ErrRemote, found.Number, err)
				}
				auto = false
			}
		}
	}
	if held {
		p.Outcome = OutcomeUpToDate
	} else {
		push := git.Push{Commit: p.Commit, Ref: target.Ref, Options: target.Options}
		if target.Branch {
			push.Lease = &lease
		} else {
			push.Force = true
		}
		res, err := r.d.Git.Push(ctx, r.top, r.o.Remote, push)
		if err != nil {
			return fmt.Errorf("%w: pushing %s to %s: %w", ErrRemote, p.Branch, r.o.Remote, err)
		}
		p.Outcome = OutcomePushed
		p.Push = &Push{Ref: res.Ref, Status: res.Status, Remote: res.Remote}
		if p.Push.Remote == nil {
			p.Push.Remote = []string{}
		}
	}
	if r.d.Requests == nil {
		return nil
	}
	req, err := r.request(ctx, fp, found, p.Handover, auto)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRemote, err)
	}
	p.Request = req
	return nil
}

// pinsOpen is pin's open request among reqs: the one whose body carries
// the group's marker, else any open from its branch; nil when none is
// open.
func pinsOpen(reqs []forge.Request, group, base string) *forge.Request {
	var open []forge.Request
	for _, q := range reqs {
		if q.State == "open" {
			open = append(open, q)
		}
	}
	for i := range open {
		if _, ok := markedFor(open[i].Body, group, base); ok {
			return &open[i]
		}
	}
	if len(open) > 0 {
		return &open[0]
	}
	return nil
}

// held reports whether the remote holds p already: pin's branch names a
// commit of the same tree and message on the same base, or the forge
// keeps p's very commit under a request's head. Else it returns the lease
// for the branch: the commit it names now ("" when there is none). A
// branch whose commit pin did not make is an error: pin does not
// overwrite it.
func (r *run) held(ctx context.Context, t forge.Target, p *Proposal, info git.CommitInfo) (bool, string, error) {
	if !t.Branch {
		refs, err := r.d.Git.LsRemote(ctx, r.top, r.o.Remote, t.Seen...)
		if err != nil {
			return false, "", fmt.Errorf("%w: listing %s on %s: %w", ErrRemote, strings.Join(t.Seen, " "), r.o.Remote, err)
		}
		for _, c := range refs {
			if c == p.Commit {
				return true, "", nil
			}
		}
		return false, "", nil
	}
	refs, err := r.d.Git.LsRemote(ctx, r.top, r.o.Remote, t.Ref)
	if err != nil {
		return false, "", fmt.Errorf("%w: listing %s on %s: %w", ErrRemote, t.Ref, r.o.Remote, err)
	}
	if _, ok := refs[t.Ref]; !ok {
		return false, "", nil
	}
	// What the lease protects is what is compared: the commit fetched.
	now, err := r.d.Git.Fetch(ctx, r.top, r.o.Remote, t.Ref)
	if err != nil {
		return false, "", fmt.Errorf("%w: fetching %s from %s: %w", ErrRemote, t.Ref, r.o.Remote, err)
	}
	there, err := r.d.Git.Show(ctx, r.top, now)
	if err != nil {
		return false, "", err
	}
	if !pins(there.Message) {
		return false, "", &ForeignBranchError{Branch: p.Branch, Commit: now}
	}
	same := there.Tree == info.Tree && slices.Equal(there.Parents, info.Parents) && there.Message == info.Message
	return same, now, nil
}

// request updates found, pin's open request (nil: none), when its title
// or body differ, or opens one; and hands it over as h says (auto: the
// forge has automerge on for found).
func (r *run) request(ctx context.Context, fp forge.Proposal, found *forge.Request, h Handover, auto bool) (*Request, error) {
	var q forge.Request
	action := "unchanged"
	switch {
	case found == nil:
		got, err := r.d.Requests.Open(ctx, fp)
		if err != nil {
			return nil, fmt.Errorf("opening a request from %s into %s: %w", fp.Branch, fp.Base, err)
		}
		q, action = got, "opened"
	case found.Title == fp.Title && sameText(found.Body, fp.Body):
		q = *found
	default:
		got, err := r.d.Requests.Update(ctx, found.Number, fp)
		if err != nil {
			return nil, fmt.Errorf("updating request %d: %w", found.Number, err)
		}
		// The forge's answer to an edit may leave out who the request
		// is handed to: what was read is what it had.
		got.Labels, got.Assignees, got.Reviewers = found.Labels, found.Assignees, found.Reviewers
		q, action = got, "updated"
	}
	changed, err := r.hand(ctx, q, h, auto, action == "opened", action == "updated")
	if err != nil {
		return nil, err
	}
	if changed && action == "unchanged" {
		action = "updated"
	}
	return &Request{Number: q.Number, URL: q.URL, Action: action}, nil
}

// sameText compares two bodies as a forge may store them: line endings
// and trailing space aside.
func sameText(a, b string) bool {
	norm := func(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")) }
	return norm(a) == norm(b)
}
