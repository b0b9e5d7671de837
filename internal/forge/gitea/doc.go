// Package gitea opens and updates pin propose's pull requests through
// Gitea's (and Forgejo's) REST API, with code.gitea.io/sdk/gitea: list
// the open pulls of a repository (GET /api/v1/repos/{owner}/{repo}/pulls,
// kept where head and base match), open one (POST …/pulls with head,
// base, title, body) and update its title and body (PATCH
// …/pulls/{index}); hand one over (its issue's labels by the repository's
// label IDs, its assignees, review requests), set it to merge when its
// checks succeed (POST …/pulls/{index}/merge with
// merge_when_checks_succeed; DELETE takes that back; the timeline's
// scheduled and cancelled merges say which holds), and list a
// repository's releases. Its tests run against a real Gitea that
// scripts/test starts.
package gitea
