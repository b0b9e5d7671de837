// Package truth is a test kit that checks pin's one promise against a
// world whose truth it knows.
//
// It generates histories: modules whose images each carry a hidden true
// release rank, registries whose tags and labels are derived from those
// ranks with the noise real registries have (variants, floating and
// reduced-precision tags, pre-releases, missing or disagreeing labels,
// implausible and backported build dates, indexes, mixed indexes whose
// platform entries are other builds, tags that lie), hosts whose
// containers start, stop and vanish (some run under a tag given on the
// host), catalogues edited over time (pins, runs_on, modules renamed,
// removed and added back, a host joining the catalogue where modules run
// by label) and lock entries edited by hand. After every step (resolve,
// resolve MODULE, lock --from-host, plan, outdated) an oracle that knows
// only the ranks, and never calls pin's ordering code (internal/order,
// internal/version), checks that:
//
//  1. a written lock never names an image truly older than a floor seen so
//     far, unless the catalogue allows the downgrade in words; a floor
//     follows its module through renames, and waits for a removed one to
//     come back (a module renamed and moved to other hosts before any lock
//     named it takes no floor over: its old entry waits, retired, for a
//     module that takes its containers over); and lock --from-host never
//     decides a module it touches
//     below a container on a host no step that wrote the lock read for
//     that module (one that joined since, or that only "resolve MODULE"
//     for another module read);
//  2. plan never calls a true downgrade an upgrade or the same;
//  3. outdated reports a failing status when a host runs something truly
//     newer than the lock;
//  4. on a clean module (honest full-precision tags in one variant) pin
//     decides, and picks the true newest image allowed;
//  5. the same step twice gives the same lock bytes.
//
// One history in three declares two environments (envgen.go): staging
// (h1, h2) and production (h3, h4), promoted from staging after a soak
// of 24 hours or none, each with its own lock file. The clock passes
// (the time source is injected), containers carry their start and the
// restarts their engine made, and the steps add "pin promote staging
// production" (every module, some, or a manual pick, which holds) and
// "pin promote --lift". Every step splits the run by environment as
// cmd/pin does (source.Inputs.Environments over lock files on disk,
// then resolve per environment, or package promote with resolve's floor
// rule). In half of these histories hosts move (hostmove.go): the
// catalogue moves a host into the other environment (its containers
// removed, stopped or replaced by a truly older build on the way, at
// times), and steps run "pin resolve --environment X". A run that would
// rewrite a lock still recording a moved host without deciding the host's
// new environment is refused, nothing written, as every command refuses
// it (source.Moved, which pin_env.go calls as cmd/pin does). The oracle (envoracle.go, hostmove_oracle.go)
// checks, besides 2, 3 and 5 per environment, that:
//
//  6. each environment's written lock never names an image truly older
//     than that environment's floors: its own hosts' containers seen by
//     a step that wrote its lock, its own previous locks, and what its
//     hosts ran before they moved into it, seen by a step that wrote the
//     other environment's lock then (check moved-host: for a module that
//     runs on the host; a floor belongs to what ran on a host, not to the
//     environment it was in) — unless the catalogue allows the downgrade
//     in words; the other environment's hosts never count (production may
//     be locked below what staging runs);
//  7. a lock names, for a module of policy exact or at-least-running,
//     only a build its environment's own inputs name: the catalogue's
//     pin, a container on its own hosts, its own previous entry, or what
//     the other environment's lock recorded in an entry held against one
//     of its hosts (a host that moved in: that lock takes the floor over);
//     another environment's floor leaking in shows as a build none of
//     them names;
//  8. a promotion writes, for each module of its unit, the build that
//     every host of FROM running the module (running, paused or
//     restarting) runs — never FROM's lock, never one host's alone — each
//     since at least TO's soak, counted from its last start; a manual
//     pick writes the image picked, with a hold;
//  9. a refused promotion gives TO's lock byte-identical and promotes
//     nothing; a promotion changes only the entries of its unit;
//  10. a held entry stays at its image, hold included, in resolve (which,
//     as resolve/hold.go says, locks it as an exact pin would: a floor
//     above it refuses, it never moves it up) and in automatic
//     promotions, until "--lift" lifts it (and lift lifts only a hold).
//
// In every history, hosts go down and come back (the "skip" feature,
// drawn apart from the other draws so that histories stay those they
// were): a host that is down is skipped under skip_unreachable, as
// source.Load skips it, and the record of the run says so
// (source.Inputs.Record). It is not read: its containers are no floor
// seen by that step, a step that writes the lock does not read it for its
// modules (so a later lock --from-host of another host must refuse rather
// than lock below what it runs: check 1), and a promotion whose FROM host
// of a module is down must be refused (check 8). In histories with
// environments (host moves included), modules are renamed, their containers
// kept: the floor and the hold of each environment's entry follow them
// where pin's takeover rule ties the entry to the renamed module
// (oracle.go: aliased, tied; check 10).
//
// Every call into pin goes through pin.go and pin_env.go, the files to
// rewire when pin's API changes. The package holds no production code:
// nothing outside tests imports it.
//
// Running it:
//
//	go test -run '^TestTruth$' ./internal/testkit/truth                      # 5,000 steps (2,000 under -race)
//	go test -run TestTruth ./internal/testkit/truth -truth.steps=100000      # the mutants skip when -truth.* is set
//	go test -run '^TestTruth$' ./internal/testkit/truth -truth.seed=7 -truth.history=42   # replay one history
//	go test -run '^TestTruth$' ./internal/testkit/truth -truth.without=stopped,tamper     # switch noise off (Features)
//	go test -run TestTruthMutants ./internal/testkit/truth -v                 # the mutation check (not with -short)
//
// PIN_TRUTH_STEPS, PIN_TRUTH_SEED and PIN_TRUTH_WITHOUT set the same from
// the environment. A failure prints the seed, the history shrunk to the
// ops that still break the same check, and the step that broke.
//
// Fairness: every noise the generator adds either leaves the truth
// recoverable by a careful reader or makes the order undecidable, where
// refusing is right. A lying tag comes with an honest full label; a build
// whose label lies is only ever named by a tag (never by digest alone), so
// the disagreement shows; backports (a lower version built later) occur
// only in modules with no lies, whose builds then all carry their full
// version label (a digest, or a floating "1.27", must not leave only the
// backport's misleading date to order by); "latest", no
// version, never names a build whose label lies; builds without any version have honest
// dates, implausible ones (epoch, future: to be read as none) or none.
// A tag given on the host names only unlabelled builds (the registry
// contradicts it). A mixed index is only ever pinned by digest, in
// histories whose hosts are all linux/amd64, and its true rank is its
// linux/amd64 entry's: what every host pulls. Refusing is always sound;
// only the clean class demands a decision.
//
// Floors, as the oracle counts them: every container (any state but
// "created") that a step which wrote the lock observed, and every lock pin
// wrote, until a write the catalogue allows in words (allow_downgrade, and
// restore for one_way) makes that lock the new floor. What a step that
// wrote nothing saw is not held against pin: it had no way to record it.
package truth
