package gitea

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"slices"
	"strings"
	"time"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/pin-tool/pin/internal/forge"
)

// Requests is one repository's pull requests.
type Requests struct {
	url, token  string
	owner, repo string
	http        *http.Client
}

// New is the pull requests of owner/repo on the Gitea at url
// ("https://gitea.example.org/"), authenticated with token, through
// client (nil: a default one).
func New(url, token, owner, repo string, client *http.Client) *Requests {
	if client == nil {
		client = &http.Client{}
	}
	return &Requests{url: url, token: token, owner: owner, repo: repo, http: client}
}

// client is an SDK client for one call: the SDK holds its context in
// the client. It asks no version first (pin uses only endpoints every
// Gitea since 1.11 has).
func (r *Requests) client(ctx context.Context) (*sdk.Client, error) {
	opts := []sdk.ClientOption{sdk.SetHTTPClient(r.http), sdk.SetContext(ctx), sdk.SetGiteaVersion(""), sdk.SetUserAgent("pin-propose")}
	if r.token != "" {
		opts = append(opts, sdk.SetToken(r.token))
	}
	c, err := sdk.NewClient(r.url, opts...)
	if err != nil {
		return nil, fmt.Errorf("gitea client for %s: %w", r.url, err)
	}
	return c, nil
}

// List returns the pull requests, open or closed, from branch into base.
func (r *Requests) List(ctx context.Context, base, branch string) ([]forge.Request, error) {
	c, err := r.client(ctx)
	if err != nil {
		return nil, err
	}
	var out []forge.Request
	for page := 1; ; page++ {
		prs, resp, err := c.ListRepoPullRequests(r.owner, r.repo, sdk.ListPullRequestsOptions{State: sdk.StateAll, ListOptions: sdk.ListOptions{Page: page, PageSize: 50}})
		if err != nil {
			return nil, fmt.Errorf("gitea: listing the pull requests of %s/%s: %w", r.owner, r.repo, err)
		}
		for _, p := range prs {
			if q := request(p); q.Base == base && q.Branch == branch {
				out = append(out, q)
			}
		}
		if len(prs) == 0 || resp == nil || resp.NextPage == 0 {
			return out, nil
		}
	}
}

// Open opens a pull request for p.
func (r *Requests) Open(ctx context.Context, p forge.Proposal) (forge.Request, error) {
	c, err := r.client(ctx)
	if err != nil {
		return forge.Request{}, err
	}
	pr, _, err := c.CreatePullRequest(r.owner, r.repo, sdk.CreatePullRequestOption{Head: p.Branch, Base: p.Base, Title: p.Title, Body: p.Body})
	if err != nil {
		return forge.Request{}, fmt.Errorf("gitea: opening a pull request from %s into %s: %w", p.Branch, p.Base, err)
	}
	return request(pr), nil
}

// Update sets pull request number's title and body to p's.
func (r *Requests) Update(ctx context.Context, number int, p forge.Proposal) (forge.Request, error) {
	c, err := r.client(ctx)
	if err != nil {
		return forge.Request{}, err
	}
	body := p.Body
	pr, _, err := c.EditPullRequest(r.owner, r.repo, int64(number), sdk.EditPullRequestOption{Title: p.Title, Body: &body})
	if err != nil {
		return forge.Request{}, fmt.Errorf("gitea: updating pull request %d: %w", number, err)
	}
	return request(pr), nil
}

func request(p *sdk.PullRequest) forge.Request {
	q := forge.Request{Number: int(p.Index), URL: p.HTMLURL, Title: p.Title, Body: p.Body, State: string(p.State)}
	if p.HasMerged {
		q.State = "merged"
	}
	if p.Base != nil {
		q.Base = p.Base.Ref
	}
	if p.Head != nil {
		q.Branch = p.Head.Ref
	}
	for _, l := range p.Labels {
		q.Labels = append(q.Labels, l.Name)
	}
	for _, u := range p.Assignees {
		q.Assignees = append(q.Assignees, u.UserName)
	}
	for _, u := range p.RequestedReviewers {
		q.Reviewers = append(q.Reviewers, u.UserName)
	}
	return q
}

// Hand adds to request q the labels and assignees of add, and asks add's
// reviewers for a review. Labels are the repository's, by name: one it
// does not have is an error, not made up.
func (r *Requests) Hand(ctx context.Context, q forge.Request, add forge.Handover) error {
	c, err := r.client(ctx)
	if err != nil {
		return err
	}
	n := int64(q.Number)
	if len(add.Labels) > 0 {
		ids, err := r.labelIDs(c, add.Labels)
		if err != nil {
			return err
		}
		if _, _, err := c.AddIssueLabels(r.owner, r.repo, n, sdk.IssueLabelsOption{Labels: ids}); err != nil {
			return fmt.Errorf("gitea: labelling pull request %d: %w", n, err)
		}
	}
	if len(add.Assignees) > 0 {
		// Gitea sets the assignees whole: the request's stay.
		all := append(slices.Clone(q.Assignees), add.Assignees...)
		slices.Sort(all)
		if _, _, err := c.EditPullRequest(r.owner, r.repo, n, sdk.EditPullRequestOption{Assignees: slices.Compact(all)}); err != nil {
			return fmt.Errorf("gitea: assigning pull request %d: %w", n, err)
		}
	}
	if len(add.Reviewers) > 0 {
		if _, err := c.CreateReviewRequests(r.owner, r.repo, n, sdk.PullReviewRequestOptions{Reviewers: add.Reviewers}); err != nil {
			return fmt.Errorf("gitea: asking %s to review pull request %d: %w", strings.Join(add.Reviewers, ", "), n, err)
		}
	}
	return nil
}

// labelIDs are the IDs of the repository's labels names.
func (r *Requests) labelIDs(c *sdk.Client, names []string) ([]int64, error) {
	have := map[string]int64{}
	for page := 1; ; page++ {
		ls, resp, err := c.ListRepoLabels(r.owner, r.repo, sdk.ListLabelsOptions{ListOptions: sdk.ListOptions{Page: page, PageSize: 50}})
		if err != nil {
			return nil, fmt.Errorf("gitea: listing the labels of %s/%s: %w", r.owner, r.repo, err)
		}
		for _, l := range ls {
			have[l.Name] = l.ID
		}
		if len(ls) == 0 || resp == nil || resp.NextPage == 0 {
			break
		}
	}
	var ids []int64
	var missing []string
	for _, n := range names {
		id, ok := have[n]
		if !ok {
			missing = append(missing, fmt.Sprintf("%q", n))
		}
		ids = append(ids, id)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("gitea: %s/%s has no label %s: create it in the repository's labels, or leave it out", r.owner, r.repo, strings.Join(missing, ", "))
	}
	return ids, nil
}

// Automerge reports whether request number is to be merged once its
// checks pass: Gitea says so only in its timeline, as the last of its
// scheduled and cancelled merges. (Read directly: the SDK's timeline
// type no longer decodes what Gitea answers.)
func (r *Requests) Automerge(ctx context.Context, number int) (bool, error) {
	on := false
	for page := 1; page <= 100; page++ {
		status, body, err := r.do(ctx, "GET", fmt.Sprintf("/repos/%s/%s/issues/%d/timeline?page=%d&limit=50", neturl.PathEscape(r.owner), neturl.PathEscape(r.repo), number, page), nil)
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("%d: %s", status, strings.TrimSpace(string(body)))
		}
		var tl []struct {
			Type string `json:"type"`
		}
		if err == nil {
			err = json.Unmarshal(body, &tl)
		}
		if err != nil {
			return false, fmt.Errorf("gitea: reading the timeline of pull request %d: %w", number, err)
		}
		for _, e := range tl {
			switch e.Type {
			case "pull_scheduled_merge":
				on = true
			case "pull_cancel_scheduled_merge":
				on = false
			}
		}
		if len(tl) < 50 {
			break
		}
	}
	return on, nil
}

// do sends one request to the API (path under /api/v1), with body as
// JSON when not nil, and returns the status and (up to 1 MiB of) the
// answer.
func (r *Requests) do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(r.url, "/")+"/api/v1"+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "pin-propose")
	if r.token != "" {
		req.Header.Set("Authorization", "token "+r.token)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, err
}

// SetAutomerge asks Gitea to merge request number once its required
// checks pass (on: the merge endpoint with merge_when_checks_succeed), or
// takes that back. With no required check on the base, Gitea merges at
// once.
func (r *Requests) SetAutomerge(ctx context.Context, number int, on bool) error {
	c, err := r.client(ctx)
	if err != nil {
		return err
	}
	if !on {
		if _, err := c.CancelScheduledAutoMerge(r.owner, r.repo, int64(number)); err != nil {
			return fmt.Errorf("gitea: cancelling the automerge of pull request %d: %w", number, err)
		}
		return nil
	}
	// The SDK's merge leaves out why Gitea refused: asked directly.
	path := fmt.Sprintf("/repos/%s/%s/pulls/%d/merge", neturl.PathEscape(r.owner), neturl.PathEscape(r.repo), number)
	for wait := 250 * time.Millisecond; ; wait *= 2 {
		status, msg, err := r.do(ctx, "POST", path, map[string]any{"Do": "merge", "merge_when_checks_succeed": true})
		if err != nil {
			return fmt.Errorf("gitea: setting pull request %d to merge when its checks succeed: %w", number, err)
		}
		switch {
		case status == http.StatusCreated || status == http.StatusOK:
			return nil
		case status == http.StatusConflict && strings.Contains(string(msg), "scheduled"):
			return nil // set already
		case status == http.StatusMethodNotAllowed && strings.Contains(string(msg), "try again later") && wait < 16*time.Second:
			// Gitea is still checking whether the request merges
			// cleanly (just opened or pushed to).
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
			continue
		}
		return fmt.Errorf("gitea: setting pull request %d to merge when its checks succeed: %d: %s", number, status, strings.TrimSpace(string(msg)))
	}
}

// Web is the Gitea's address, as forge.Remote.Web names it.
func (r *Requests) Web() string { return strings.TrimSuffix(r.url, "/") + "/" }

// Kind is the URL shape of its pages.
func (r *Requests) Kind() string { return forge.KindGitea }

// Releases lists the releases of owner/repo on this Gitea, newest first.
func (r *Requests) Releases(ctx context.Context, owner, repo string) ([]forge.Release, error) {
	c, err := r.client(ctx)
	if err != nil {
		return nil, err
	}
	var out []forge.Release
	for page := 1; ; page++ {
		rs, resp, err := c.ListReleases(owner, repo, sdk.ListReleasesOptions{ListOptions: sdk.ListOptions{Page: page, PageSize: 50}})
		if err != nil {
			return nil, fmt.Errorf("gitea: listing the releases of %s/%s: %w", owner, repo, err)
		}
		for _, x := range rs {
			out = append(out, forge.Release{Tag: x.TagName, Name: x.Title, Notes: x.Note, URL: x.HTMLURL, Draft: x.IsDraft, Prerelease: x.IsPrerelease})
		}
		if len(rs) == 0 || resp == nil || resp.NextPage == 0 || page >= maxReleasePages {
			return out, nil
		}
	}
}

// maxReleasePages bounds what one listing reads: 500 releases.
const maxReleasePages = 10
