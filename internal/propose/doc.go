// Package propose carries the safe update to a pull or merge request:
// "pin propose".
//
// In a clean checkout, it fetches the base branch, checks it out into a
// temporary work tree of the user's repository, and there resolves the
// catalogue as "pin resolve" does. The change set is the lock diff: per
// proposal, the lock with the proposal's modules decided and every other
// entry as the base has it, and the exports the repository declares (the
// base's catalogue's export block, or what the command line names),
// written as "pin export" writes them. Each proposal is checked with the
// cutover gate of "pin plan" (resolve.PlanCutover) against every host
// before anything is pushed: a module whose new entry would downgrade what
// a host runs, or cannot be ordered against it, is refused and left as it
// was, like a module resolve refuses.
//
// A proposal is committed on the fresh base, onto a branch named from its
// group ("pin/update"), with a message whose first line is the title and
// whose body is the table a reviewer reads; its author and committer date
// is the base's, so the same result on the same base is the same commit.
// It is pushed with a lease on what the branch named when read, and not at
// all when the branch (or the forge's copy of a magic ref) already holds
// it. A forge's request is opened through a push convention or an API
// (package forge), found again by the hidden marker in its body.
//
// The request's body also says what changed upstream (upstream.go): the
// images' OCI labels, read from their configs by digest, as links (the
// source, a comparison of the two revisions), and the release notes
// between the two versions from the forge pin proposes to, and from no
// other host; every label is escaped as text. The request is handed over
// as the catalogue's propose block and the options say (handover.go):
// labels, reviewers, assignees, and automerge, which is never set on a
// request that holds a refusal, an accepted downgrade or a promotion, and
// is taken back before such a commit is pushed. Outside the block's
// schedule a run commits in its work tree and pushes nothing.
//
// What it does not do: merge, touch the user's checkout, lock file or
// branches (the work tree is removed after), decide any order (package
// resolve does), or reach a network itself: the user's git, the hosts and
// registries (source.Inputs) and a forge's API are given to it behind
// small interfaces.
package propose
