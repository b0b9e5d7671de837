// Package github opens and updates pin propose's pull requests through
// GitHub's REST API, with github.com/google/go-github.
//
// It is a thin adapter over three documented endpoints: list the open
// pulls from a head branch into a base (GET /repos/{owner}/{repo}/pulls
// with state, head and base), open one (POST …/pulls with title, head,
// base, body) and update its title and body (PATCH …/pulls/{number});
// hand one over (POST …/issues/{number}/labels and /assignees, POST
// …/pulls/{number}/requested_reviewers), list releases (GET
// …/releases), and enable or disable auto-merge, which only GraphQL
// offers (enablePullRequestAutoMerge, disablePullRequestAutoMerge).
// GitHub cannot be reached from pin's tests: they check these request
// shapes against GitHub's documented API on an httptest server, a seam
// pin owns, not GitHub's behaviour. Which request to update is decided by
// package propose (by its marker), not here.
package github
