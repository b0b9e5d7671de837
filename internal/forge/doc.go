// Package forge says how a proposal reaches a forge: the ref a push goes
// to, with which git push options, and the request (pull or merge request)
// a forge's API opens.
//
// The push conventions need no token beyond push rights:
//
//   - Branch: a plain branch (refs/heads/<branch>), pushed with a lease;
//     a person or another tool opens the request.
//   - GitLab: the same branch, with GitLab's push options
//     (merge_request.create, .target, .title, .description): GitLab opens
//     the merge request, or updates the one open from that branch.
//   - AGit (Gitea, Forgejo): refs/for/<base>/<topic>, with -o title and -o
//     description ({base64}-encoded, as they hold new lines) and -o
//     force-push: the forge opens a pull request, or moves the one open
//     for that topic to the new commit.
//   - Gerrit: refs/for/<base> with -o topic; the commit's Change-Id trailer
//     makes a new push a new patch set of the same change.
//
// The API tiers (packages forge/github and forge/gitea) push a Branch, then
// find pin's own open request by its marker and update it, or open one.
//
// A Handover says who a request is handed to (labels, reviewers,
// assignees) and whether the forge merges it once its checks pass; the
// API tiers carry all of it, GitLab's push options labels and assignees
// (Convention.Carries says what a convention cannot). A Source is a
// repository an image's label names, on a forge whose page shapes (the
// repository, a comparison, its releases) are known.
//
// The package is pure: it builds refs and options, and imports nothing
// that reaches a network.
package forge
