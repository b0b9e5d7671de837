// Package promote carries builds from one environment to the next: the
// digest observed running on every host of environment FROM that runs a
// module becomes the module's entry in environment TO's lock, with where
// it came from (lock.Promotion), or the module is refused, naming it and
// what to do. It also draws the drift matrix, module × environment.
//
// It decides only: its inputs are what the hosts of both environments
// run (observe.Observed, read before, start times included), TO's lock,
// and two small interfaces for what needs a registry — Floors, the floor
// rule of package resolve asked of one candidate in TO (ResolveFloors is
// pin's, over resolve.Judge), and Verifier, the module's signature
// policy — plus the time now. It reaches no network, writes no file and
// renders nothing: cmd/pin does.
//
// A promotion refuses, and changes nothing, when a container of the
// module on FROM does not run healthy as TO requires (health.go: exited,
// dead, restarting or paused; its health check failing or not yet
// passed; its pod not Ready; restarted by its engine within the soak —
// TO's require may ask less), when FROM's hosts disagree
// (skew), when the build has run in FROM for less than TO's soak (from
// each container's start as its engine reports it: a restart starts the
// clock again), when the signature policy fails, when TO runs or locks
// something newer or unorderable (allow_downgrade as resolve allows it),
// when FROM runs nothing of a module named, and when a module named is
// held. Modules promoted together are one unit, all or nothing, named by
// a release hash every entry records. A manual pick (Pick) records a hold
// that resolve and later automatic promotions keep until it is lifted
// (Lift); automatic promotions skip held entries and report them.
package promote
