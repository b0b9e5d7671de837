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
	return forge.Request{Number: p.GetNumber(), URL: p.GetHTMLURL(), Base: p.GetBase().GetRef(), Branch: p.GetHead().GetRef(), Title: p.GetTitle(), Body: p.GetBody(), State: state}
}
