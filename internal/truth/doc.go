// Package truth is a test kit that checks pin's one promise against a
// world whose truth it knows.
//
// It generates histories: modules whose images each carry a hidden true
// release rank, registries whose tags and labels are derived from those
// ranks with the noise real registries have (variants, floating and
// reduced-precision tags, pre-releases, missing or disagreeing labels,
// implausible and backported build dates, indexes, tags that lie), hosts
// whose containers start, stop and vanish, catalogues edited over time and
// lock entries edited by hand. After every step (resolve, lock --from-host,
// plan, outdated) an oracle that knows only the ranks, and never calls
// pin's ordering code (internal/order, internal/version), checks that:
//
//  1. a written lock never names an image truly older than a floor seen so
//     far, unless the catalogue allows the downgrade in words;
//  2. plan never calls a true downgrade an upgrade or the same;
//  3. outdated reports a failing status when a host runs something truly
//     newer than the lock;
//  4. on a clean module (honest full-precision tags in one variant) pin
//     decides, and picks the true newest image allowed;
//  5. the same step twice gives the same lock bytes.
//
// Every call into pin goes through pin.go, the one file to rewire when
// pin's API changes. The package holds no production code: nothing outside
// tests imports it.
//
// Fairness: every noise the generator adds either leaves the truth
// recoverable by a careful reader (a lying tag comes with an honest label;
// a backport only where every other signal is honest) or makes the order
// undecidable, where refusing is right. Refusing is always sound; only the
// clean class demands a decision.
package truth
