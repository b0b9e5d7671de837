// Package registry reads what registries offer: tag lists, digests, image
// manifests and configs, turned into image.Image values that package order
// can compare.
//
// Two sources share one way of describing an image (describe.go): an OCI
// image layout folder used as a mirror (Layout; air-gapped sites and the
// offline examples), and registries over the OCI distribution API.
// Manifests and configs are verified against their digests before use.
// Indexes are resolved to one platform; the image keeps the index digest and
// the digest of every platform.
//
// The package fetches; it never decides which image wins.
package registry
