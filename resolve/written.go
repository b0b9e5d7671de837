package resolve

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/order"
)

// JudgeWritten orders module m's lock entry against the image a deploy
// file names where an export would write the entry (written, a reference
// of m's repository as the file has it: "nginx:1.22.1",
// "web:1.2@sha256:…"). The result is the entry relative to the written
// image: only Newer or Equal lets the export write it there; Older and
// Unknown are refused, since no write may make a deploy file name an
// older or unorderable image than it named.
//
// Each side is read by content where a registry answers: the entry by
// its digest (its lines checked against it), the written image by its
// digest, else by its tag (what a deploy pulls now). Where the content
// cannot be had (offline, a registry that fails or does not hold it),
// the side is what its text says: its tag as a version, and the entry's
// recorded version and build date (a tag is what a deploy file's author
// wrote it runs; what it cannot order is refused). A written reference with no digest
// whose tag is the entry's own is the entry's image as far as the file
// says (the lock resolved that tag): Equal.
func JudgeWritten(ctx context.Context, in Input, m *catalogue.Module, written string) (order.Result, error) {
	e := in.Old.Module(m.Name)
	if e == nil || e.Digest == "" {
		return order.Result{Cmp: order.Unknown, Rule: order.RuleNone, Detail: "the module is not locked"}, nil
	}
	tag, digest := splitWritten(written)
	if tag == "" && digest == "" {
		tag = "latest" // what a runtime pulls for a reference without either
	}
	if digest == e.Digest {
		return order.Result{Cmp: order.Equal, Rule: order.RuleContent, Detail: "same digest"}, nil
	}
	if digest == "" && tag != "" && tag == e.Tag {
		return order.Result{Cmp: order.Equal, Rule: order.RuleContent, Detail: fmt.Sprintf("the file names the locked tag %s", tag)}, nil
	}
	reg := in.registry(m)
	opts := orderOptions(m, in.Now)
	locked, _, err := lockedImage(ctx, reg, m, e, opts, "")
	if err != nil {
		var mismatch *LockMismatchError
		if ctx.Err() != nil || errors.As(err, &mismatch) {
			return order.Result{}, err
		}
		locked = claimedImage(e)
	}
	named := image.Image{Repository: m.Image, Tag: tag, Digest: digest}
	if ref := firstOf(digest, tag); reg != nil && ref != "" {
		if img, err := reg.Image(ctx, m.Image, ref, m.Platform()); err == nil {
			img.Tag = tag
			named = img
		} else if ctx.Err() != nil {
			return order.Result{}, ctx.Err()
		}
	}
	res := order.Compare(locked, named, opts)
	return res, nil
}

// splitWritten is the tag and the digest of a reference as written.
func splitWritten(ref string) (tag, digest string) {
	rest, digest, _ := strings.Cut(ref, "@")
	if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
		tag = rest[i+1:]
	}
	return tag, digest
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
