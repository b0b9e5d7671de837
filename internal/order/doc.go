// Package order answers one question: is image A older than image B?
//
// It applies docs/design.md's rules in order and records which one decided
// (Result.Rule; an Unknown result always has RuleNone):
//
//  1. content: equal manifest digest, equal config digest, a host image ID
//     that is the other's config or manifest digest, or A's digest is a
//     platform entry of B's index → equal.
//  2. signals must agree: an image's tag and its
//     org.opencontainers.image.version label, each read under the module's
//     scheme, are two claims (VersionOf). They agree when their cores are
//     equal over the shorter precision and their pre-release markers are
//     equal (prefix and suffix are not compared: labels rarely carry them);
//     the image's version is then the more precise of the two (the tag's on
//     equal precision), with that version's own variant. Otherwise the
//     image's version is conflicting, and the image is Unknown against any
//     image of other content, whatever else is known.
//  3. version, one variant: when both versions are of one variant (prefix,
//     precision, suffix), or the module allows any variant, different
//     versions decide; equal versions (a rebuild) fall to the build dates.
//     Backports stay ordered by version. Label-only versions obey the same
//     variant rule as tags.
//  4. version across variants: each version is read as the interval its
//     precision names ("1.27" is every 1.27.x, "1.27.0" its bottom; see
//     version.Relate). The build dates decide only where they agree with
//     that reading, or where it says nothing ("1.27.3" against "1.27");
//     where the versions and the dates point opposite ways, or no plausible
//     dates exist, the order is Unknown: the version alone does not decide
//     across variants.
//  5. created: both have a plausible build date (config created, else the
//     org.opencontainers.image.created label); epoch dates, year-one dates
//     and dates in the future are unknown, not old.
//  6. otherwise the order is unknown.
//
// Unknown is a result of its own, never "newer". Compare is antisymmetric:
// Compare(b, a) mirrors Compare(a, b) by the same rule. The package is
// pure: it fetches nothing, and the current time is passed in. It does not
// read tags lists or rank candidates; resolve does, with package version.
package order
