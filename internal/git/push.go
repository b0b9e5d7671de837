package git

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
)

// Push is one git push of one commit to one ref.
type Push struct {
	// Commit is what is pushed; Ref the remote ref it goes to
	// ("refs/heads/pin/update", "refs/for/main/pin-update").
	Commit, Ref string
	// Lease, when not nil, is the commit Ref must still name on the remote
	// for the push to happen (git push --force-with-lease=Ref:*Lease); ""
	// means Ref must not exist. nil pushes without a lease and without
	// force, as a push to a magic ref (refs/for/…) must.
	Lease *string
	// Options are git push options (-o), each "key" or "key=value".
	Options []string
	// Force, without a Lease, pushes whatever Ref names now (+Commit:Ref):
	// for a magic ref, which a plain git server keeps as a ref.
	Force bool
}

// PushResult is what a push did.
type PushResult struct {
	// Ref is the ref the remote says it updated: Ref of the push, or
	// where a forge put what a magic ref received ("refs/pull/7/head").
	Ref string
	// Status is git's summary of the ref ("[new branch]", "forced update",
	// "[up to date]", …).
	Status string
	// Remote are the lines the remote said ("remote: …"), prefix removed:
	// a forge says there where it opened a request.
	Remote []string
}

// ErrStale is the reason of a push refused because its lease no longer
// holds: the remote ref moved since it was read.
var ErrStale = errors.New("the remote ref moved since it was read (stale lease)")

// PushRejectedError is a push the remote or git refused for Ref.
type PushRejectedError struct {
	Ref    string
	Reason string
	// Remote are the lines the remote said.
	Remote []string
	// Err is ErrStale for a broken lease, else the failed command.
	Err error
}

func (e *PushRejectedError) Error() string {
	s := fmt.Sprintf("push to %s rejected: %s", e.Ref, e.Reason)
	if len(e.Remote) > 0 {
		s += "; the remote said: " + strings.Join(e.Remote, " / ")
	}
	return s
}

func (e *PushRejectedError) Unwrap() error { return e.Err }

// Push pushes p.Commit to p.Ref on remote with the user's git.
func (g Git) Push(ctx context.Context, dir, remote string, p Push) (PushResult, error) {
	args := []string{"push", "--porcelain", "--no-verify"}
	if p.Lease != nil {
		args = append(args, "--force-with-lease="+p.Ref+":"+*p.Lease)
	}
	for _, o := range p.Options {
		args = append(args, "--push-option="+o)
	}
	spec := p.Commit + ":" + p.Ref
	if p.Force && p.Lease == nil {
		spec = "+" + spec
	}
	args = append(args, remote, spec)
	out, stderr, err := g.run2(ctx, dir, nil, "", args...)
	res := PushResult{Remote: remoteLines(stderr)}
	flag, to, status, found := porcelain(out, p.Commit, p.Ref)
	switch {
	case found && flag == '!':
		rej := &PushRejectedError{Ref: p.Ref, Reason: status, Remote: res.Remote, Err: err}
		if strings.Contains(status, "(stale info)") {
			rej.Err = ErrStale
		}
		return res, rej
	case err != nil:
		return res, err
	case !found:
		return res, fmt.Errorf("git push to %s: no status for the ref in git's output", p.Ref)
	}
	res.Ref, res.Status = to, status
	return res, nil
}

// porcelain finds the line of the push of from to ref in git push
// --porcelain output: "<flag>\t<from>:<to>\t<summary> (<reason>)". A
// forge that takes a magic ref (proc-receive) reports the ref it updated
// instead of ref.
func porcelain(out, from, ref string) (flag byte, to, status string, found bool) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 3)
		if len(f) < 3 || len(f[0]) != 1 {
			continue
		}
		if src, dst, _ := strings.Cut(f[1], ":"); src == from || dst == ref {
			return f[0][0], dst, f[2], true
		}
	}
	return 0, "", "", false
}

// remoteLines are the "remote: " lines of git's stderr.
func remoteLines(stderr string) []string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		if l, ok := strings.CutPrefix(sc.Text(), "remote: "); ok {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	return lines
}
