package catalogue

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/hashicorp/hcl/v2"
)

var (
	registrySchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "mirror"}, {Name: "insecure"}, {Name: "token_hosts"},
		{Name: "ca_file"}, {Name: "client_cert"}, {Name: "client_key"},
	}, Blocks: []hcl.BlockHeaderSchema{{Type: "verify"}}}
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
	for _, vb := range content.Blocks {
		if r.Verify != nil {
			diags = append(diags, errorf(vb.DefRange, "Duplicate verify block", "Registry %q has a verify block already at %s. Merge the two.", r.Host, r.Verify.DeclRange))
			continue
		}
		v, d := verifyBlock(vb, dir, fmt.Sprintf("registry %q", r.Host))
		diags = append(diags, d...)
		r.Verify = v
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
	attrs := content.Attributes
	for _, f := range []struct {
		name string
		dst  *string
	}{{"ca_file", &r.CAFile}, {"client_cert", &r.ClientCert}, {"client_key", &r.ClientKey}} {
		diags = append(diags, str(attrs[f.name], f.dst)...)
		if *f.dst != "" && !filepath.IsAbs(*f.dst) {
			*f.dst = filepath.Join(dir, *f.dst)
		}
	}
	if (r.ClientCert == "") != (r.ClientKey == "") {
		a := attrs["client_cert"]
		if a == nil {
			a = attrs["client_key"]
		}
		diags = append(diags, errorf(a.Range, "Incomplete client certificate", "Registry %q needs both client_cert and client_key: the certificate and its private key, each a PEM file, such as client_cert = \"certs/client.cert\" and client_key = \"certs/client.key\".", r.Host))
	}
	if mirror != "" && IsLayoutPath(mirror) {
		for _, name := range []string{"ca_file", "client_cert", "client_key"} {
			if a := attrs[name]; a != nil {
				diags = append(diags, errorf(a.Range, "TLS setting on a folder mirror", "Registry %q is read from the folder %q, not over the network: %s does not apply. Drop it, or set it where the registry is reached over TLS.", r.Host, mirror, name))
			}
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
