// Package helmvalues finds the images a Helm chart's values name, where
// each part of each is written, so that pin export can write the lock
// into the values files keeping every other byte, and pin init can start
// a catalogue from them.
//
// A chart is a folder with Chart.yaml and values.yaml; its unpacked
// subcharts (charts/<name>/) are read with it, and a subchart's values
// are merged as Helm merges them: the parent's <name>.… keys over the
// subchart's own. The shapes read:
//
//   - a map with repository (and registry, tag, digest, each optional):
//     image: {registry: r, repository: p, tag: t, digest: d}, at any
//     path (server.image, a list's item);
//   - a whole reference in one string under a key named image or ending
//     in Image ("image: nginx:1.27"), in a map or a list's item;
//   - any scalar a user marks with a comment "# pin: MODULE" (the value
//     is a whole reference), "# pin: MODULE tag" (it is the tag) or
//     "# pin: MODULE digest" (it is the digest), on its line or alone on
//     the line above it.
//
// A map without a tag reads the chart root's image.tag when there is
// one, else global.image.tag, else the chart's appVersion (the
// conventions of most charts); its tag is then borrowed, and writing it
// would pin every image that reads it. A reference found inside another
// string (a container argument, "--helper=repo:1.2") is returned as an
// Arg: it cannot be written where it is.
//
// Package helmvalues decides nothing about which module covers an image
// or what to write; internal/export does.
package helmvalues
