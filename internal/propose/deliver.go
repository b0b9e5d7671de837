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
// holds it already, and opens or updates its request through the API.
func (r *run) deliver(ctx context.Context, p *Proposal) error {
	fp := forge.Proposal{Base: p.Base, Branch: p.Branch, Title: p.Title, Body: p.Body}
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
	var reqs []forge.Request
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
	req, err := r.request(ctx, fp, p.Group, reqs)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRemote, err)
	}
	p.Request = req
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

// request finds pin's open request for p among reqs (the one from its
// branch whose body carries the group's marker, else any open from its
// branch), and updates it when its title or body differ, or opens one.
func (r *run) request(ctx context.Context, fp forge.Proposal, group string, reqs []forge.Request) (*Request, error) {
	var open []forge.Request
	for _, q := range reqs {
		if q.State == "open" {
			open = append(open, q)
		}
	}
	var found *forge.Request
	for i := range open {
		if _, ok := markedFor(open[i].Body, group, fp.Base); ok {
			found = &open[i]
			break
		}
	}
	if found == nil && len(open) > 0 {
		found = &open[0]
	}
	switch {
	case found == nil:
		got, err := r.d.Requests.Open(ctx, fp)
		if err != nil {
			return nil, fmt.Errorf("opening a request from %s into %s: %w", fp.Branch, fp.Base, err)
		}
		return &Request{Number: got.Number, URL: got.URL, Action: "opened"}, nil
	case found.Title == fp.Title && sameText(found.Body, fp.Body):
		return &Request{Number: found.Number, URL: found.URL, Action: "unchanged"}, nil
	}
	got, err := r.d.Requests.Update(ctx, found.Number, fp)
	if err != nil {
		return nil, fmt.Errorf("updating request %d: %w", found.Number, err)
	}
	return &Request{Number: got.Number, URL: got.URL, Action: "updated"}, nil
}

// sameText compares two bodies as a forge may store them: line endings
// and trailing space aside.
func sameText(a, b string) bool {
	norm := func(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")) }
	return norm(a) == norm(b)
}
