package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v89/github"

	"github.com/pin-tool/pin/internal/forge"
)

// DefaultAPI is GitHub's API; GitHub Enterprise Server serves its own at
// https://HOST/api/v3/ (in Actions: $GITHUB_API_URL).
const DefaultAPI = "https://api.github.com/"

// Requests is one repository's pull requests.
type Requests struct {
	c           *gh.Client
	owner, repo string
}

// New is the pull requests of owner/repo at the API api (DefaultAPI when
// ""), authenticated with token, through client (nil: a default one).
func New(api, token, owner, repo string, client *http.Client) (*Requests, error) {
	if api == "" {
		api = DefaultAPI
	}
	if !strings.HasSuffix(api, "/") {
		api += "/"
	}
	opts := []gh.ClientOptionsFunc{gh.WithURLs(&api, &api), gh.WithUserAgent("pin-propose")}
	if client != nil {
		opts = append(opts, gh.WithHTTPClient(client))
	}
	if token != "" {
		opts = append(opts, gh.WithAuthToken(token))
	}
	c, err := gh.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("github client for %s: %w", api, err)
	}
	return &Requests{c: c, owner: owner, repo: repo}, nil
}

// List returns the pull requests, open or closed, from branch (of this
// repository) into base.
func (r *Requests) List(ctx context.Context, base, branch string) ([]forge.Request, error) {
	opts := &gh.PullRequestListOptions{State: "all", Head: r.owner + ":" + branch, Base: base, ListOptions: gh.ListOptions{PerPage: 100}}
	var out []forge.Request
	for {
		prs, resp, err := r.c.PullRequests.List(ctx, r.owner, r.repo, opts)
		if err != nil {
			return nil, fmt.Errorf("github: listing the pull requests of %s/%s: %w", r.owner, r.repo, err)
		}
		for _, p := range prs {
			out = append(out, request(p))
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// Open opens a pull request for p.
func (r *Requests) Open(ctx context.Context, p forge.Proposal) (forge.Request, error) {
	pr, _, err := r.c.PullRequests.Create(ctx, r.owner, r.repo, &gh.NewPullRequest{
		Title: &p.Title, Head: &p.Branch, Base: &p.Base, Body: &p.Body, MaintainerCanModify: gh.Ptr(true),
	})
	if err != nil {
		return forge.Request{}, fmt.Errorf("github: opening a pull request from %s into %s: %w", p.Branch, p.Base, err)
	}
	return request(pr), nil
}

// Update sets pull request number's title and body to p's.
func (r *Requests) Update(ctx context.Context, number int, p forge.Proposal) (forge.Request, error) {
	pr, _, err := r.c.PullRequests.Edit(ctx, r.owner, r.repo, number, &gh.PullRequest{Title: &p.Title, Body: &p.Body})
	if err != nil {
		return forge.Request{}, fmt.Errorf("github: updating pull request %d: %w", number, err)
	}
	return request(pr), nil
}

func request(p *gh.PullRequest) forge.Request {
	state := p.GetState()
	if p.MergedAt != nil {
		state = "merged"
	}
	q := forge.Request{Number: p.GetNumber(), URL: p.GetHTMLURL(), Base: p.GetBase().GetRef(), Branch: p.GetHead().GetRef(), Title: p.GetTitle(), Body: p.GetBody(), State: state}
	for _, l := range p.Labels {
		q.Labels = append(q.Labels, l.GetName())
	}
	for _, u := range p.Assignees {
		q.Assignees = append(q.Assignees, u.GetLogin())
	}
	for _, u := range p.RequestedReviewers {
		q.Reviewers = append(q.Reviewers, u.GetLogin())
	}
	return q
}

// Hand adds to request q the labels and assignees of add, and asks add's
// reviewers for a review (the REST API's issue labels and assignees, and
// the pull request's requested reviewers).
func (r *Requests) Hand(ctx context.Context, q forge.Request, add forge.Handover) error {
	if len(add.Labels) > 0 {
		if _, _, err := r.c.Issues.AddLabelsToIssue(ctx, r.owner, r.repo, q.Number, add.Labels); err != nil {
			return fmt.Errorf("github: labelling pull request %d: %w", q.Number, err)
		}
	}
	if len(add.Assignees) > 0 {
		if _, _, err := r.c.Issues.AddAssignees(ctx, r.owner, r.repo, q.Number, add.Assignees); err != nil {
			return fmt.Errorf("github: assigning pull request %d: %w", q.Number, err)
		}
	}
	if len(add.Reviewers) > 0 {
		if _, _, err := r.c.PullRequests.RequestReviewers(ctx, r.owner, r.repo, q.Number, gh.ReviewersRequest{Reviewers: add.Reviewers}); err != nil {
			return fmt.Errorf("github: asking %s to review pull request %d: %w", strings.Join(add.Reviewers, ", "), q.Number, err)
		}
	}
	return nil
}

// Automerge reports whether request number has auto-merge enabled.
func (r *Requests) Automerge(ctx context.Context, number int) (bool, error) {
	pr, _, err := r.c.PullRequests.Get(ctx, r.owner, r.repo, number)
	if err != nil {
		return false, fmt.Errorf("github: reading pull request %d: %w", number, err)
	}
	return pr.AutoMerge != nil, nil
}

// SetAutomerge enables GitHub's auto-merge on request number (GraphQL's
// enablePullRequestAutoMerge: the REST API has none), or disables it.
// GitHub refuses to enable it on a request whose requirements are met
// already, and where the repository does not allow auto-merge.
func (r *Requests) SetAutomerge(ctx context.Context, number int, on bool) error {
	pr, _, err := r.c.PullRequests.Get(ctx, r.owner, r.repo, number)
	if err != nil {
		return fmt.Errorf("github: reading pull request %d: %w", number, err)
	}
	query := `mutation($id: ID!) { disablePullRequestAutoMerge(input: {pullRequestId: $id}) { clientMutationId } }`
	what := "disabling"
	if on {
		query = `mutation($id: ID!) { enablePullRequestAutoMerge(input: {pullRequestId: $id, mergeMethod: MERGE}) { clientMutationId } }`
		what = "enabling"
	}
	req, err := r.c.NewRequest(ctx, "POST", r.graphQL(), map[string]any{"query": query, "variables": map[string]any{"id": pr.GetNodeID()}})
	if err != nil {
		return err
	}
	var out struct {
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if _, err := r.c.Do(req, &out); err != nil {
		return fmt.Errorf("github: %s auto-merge of pull request %d: %w", what, number, err)
	}
	if len(out.Errors) > 0 {
		var msgs []string
		for _, e := range out.Errors {
			msgs = append(msgs, e.Message)
		}
		return fmt.Errorf("github: %s auto-merge of pull request %d: %s", what, number, strings.Join(msgs, "; "))
	}
	return nil
}

// graphQL is the GraphQL endpoint beside the REST API: api.github.com's
// /graphql, and GitHub Enterprise Server's /api/graphql beside /api/v3/.
func (r *Requests) graphQL() string {
	base := r.c.BaseURL()
	if rest, ok := strings.CutSuffix(base, "/api/v3/"); ok {
		return rest + "/api/graphql"
	}
	return base + "graphql"
}

// Web is GitHub's web address beside the API: https://github.com/ for
// api.github.com, https://HOST/ for GitHub Enterprise Server's
// https://HOST/api/v3/.
func (r *Requests) Web() string {
	base := r.c.BaseURL()
	if base == DefaultAPI {
		return "https://github.com/"
	}
	if rest, ok := strings.CutSuffix(base, "api/v3/"); ok {
		return rest
	}
	return base
}

// Kind is the URL shape of its pages.
func (r *Requests) Kind() string { return forge.KindGitHub }

// Releases lists the releases of owner/repo, newest first.
func (r *Requests) Releases(ctx context.Context, owner, repo string) ([]forge.Release, error) {
	opts := &gh.ListOptions{PerPage: 100}
	var out []forge.Release
	for page := 0; page < maxReleasePages; page++ {
		rs, resp, err := r.c.Repositories.ListReleases(ctx, owner, repo, opts)
		if err != nil {
			return nil, fmt.Errorf("github: listing the releases of %s/%s: %w", owner, repo, err)
		}
		for _, x := range rs {
			out = append(out, forge.Release{Tag: x.GetTagName(), Name: x.GetName(), Notes: x.GetBody(), URL: x.GetHTMLURL(), Draft: x.GetDraft(), Prerelease: x.GetPrerelease()})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// maxReleasePages bounds what one listing reads: 500 releases.
const maxReleasePages = 5
