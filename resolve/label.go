package resolve

import (
	"strings"

	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/order"
)

// Label names an image in messages the way people name it: by its version
// when the module's versioning reads one (from the tag or the label:
// "1.27.3"); else by its tag ("latest"); else by its short digest; last by
// the host's image ID. It never repeats a tag. Build dates are left to the
// order's detail, which says them when they decide. It is what reasons,
// findings and annotations print.
func Label(opts order.Options, i image.Image) string {
	if v := versionOf(opts, i); v != "" {
		return v
	}
	switch {
	case i.Tag != "":
		return i.Tag
	case i.Digest != "":
		return image.Short(i.Digest)
	}
	return "image ID " + image.Short(i.ImageID)
}

// labels names a and b with Label, and adds the short digests when the two
// labels would read alike although the images differ (a version
// re-published, two builds of one floating tag).
func labels(opts order.Options, a, b image.Image) (string, string) {
	la, lb := Label(opts, a), Label(opts, b)
	if la == lb && a.Digest != b.Digest {
		la, lb = withDigest(la, a), withDigest(lb, b)
	}
	return la, lb
}

func withDigest(label string, i image.Image) string {
	if i.Digest == "" {
		return label + " (image ID " + image.Short(i.ImageID) + ")"
	}
	return label + " (" + image.Short(i.Digest) + ")"
}

// label is Label under the decider's module.
func (dc *decider) label(i image.Image) string { return Label(dc.opts, i) }

// floorLabel names floor f's image, with its digest when primary would
// read alike.
func (dc *decider) floorLabel(f Floor, primary *image.Image) string {
	if primary == nil {
		return dc.label(f.Image)
	}
	l, _ := labels(dc.opts, f.Image, *primary)
	return l
}

// phrase names img, which what stands for, with its label: "the pin
// 1.22.6", "the newest upstream tag 1.27.3". Where what names img's tag
// already (a floating tag), the tag is not repeated and the label says
// what it names now: "the floating tag latest", "the floating tag artful,
// now 1.1.0", "the floating tag latest, now sha256:894d9cb601d6".
func (dc *decider) phrase(what string, img image.Image, label string) string {
	if img.Tag == "" || !strings.HasSuffix(what, " "+img.Tag) {
		return what + " " + label
	}
	switch {
	case label == img.Tag:
		return what
	case strings.HasPrefix(label, img.Tag+" ("):
		// "latest (sha256:…)": two builds of the tag, told by digest.
		return what + ", now " + strings.TrimSuffix(strings.TrimPrefix(label, img.Tag+" ("), ")")
	}
	return what + ", now " + label
}
