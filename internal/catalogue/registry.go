package catalogue

import (
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/hashicorp/hcl/v2"
)

var (
	registrySchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "mirror"}, {Name: "insecure"}, {Name: "token_hosts"},
	}}
)

func (l *loader) registry(b *hcl.Block, dir string) hcl.Diagnostics {
	r := &Registry{Host: b.Labels[0], DeclRange: b.DefRange}
	content, diags := b.Body.Content(registrySchema)
	if reg, err := name.NewRegistry(r.Host); err != nil || strings.Contains(r.Host, "/") {
		diags = append(diags, errorf(b.LabelRanges[0], "Invalid registry host", "%q is not a registry host. Write the host as it appears in image names, such as \"ghcr.io\" or \"registry.example.org:5000\".", r.Host))
	} else {
		r.Host = reg.RegistryStr()
	}
	if prev, ok := l.regs[r.Host]; ok {
		diags = append(diags, errorf(b.LabelRanges[0], "Duplicate registry", "Registry %q is already configured at %s. Merge the two blocks.", r.Host, prev.DeclRange))
	} else {
		l.regs[r.Host] = r
		l.c.Registries = append(l.c.Registries, r)
	}
	var mirror string
	diags = append(diags, str(content.Attributes["mirror"], &mirror)...)
	diags = append(diags, boolean(content.Attributes["insecure"], &r.Insecure)...)
	diags = append(diags, strList(content.Attributes["token_hosts"], &r.TokenHosts)...)
	for _, h := range r.TokenHosts {
		if _, err := name.NewRegistry(h, name.StrictValidation); err != nil || strings.ContainsAny(h, "/@?#") || h == "" {
			diags = append(diags, errorf(content.Attributes["token_hosts"].Expr.Range(), "Invalid token host", "%q is not a host. Write the token server's host (or host:port) alone, such as \"authn.nvidia.com\": it is asked over https.", h))
		}
	}
	if mirror != "" {
		if IsLayoutPath(mirror) {
			if !filepath.IsAbs(mirror) {
				mirror = filepath.Join(dir, mirror)
			}
			r.MirrorLayout = mirror
		} else {
			r.MirrorHost = mirror
		}
	}
	return diags
}

// IsLayoutPath tells a mirror that is a folder from one that is a registry
// host, the way Docker tells a registry host from a path: a folder starts
// with "/", "./" or "../", or its first segment has no "." or ":" and is not
// "localhost".
func IsLayoutPath(s string) bool {
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || s == "." {
		return true
	}
	first, _, _ := strings.Cut(s, "/")
	return !strings.ContainsAny(first, ".:") && first != "localhost"
}
