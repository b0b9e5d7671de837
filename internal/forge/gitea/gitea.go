package gitea

import (
	"context"
	"fmt"
	"net/http"

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
	return q
}
