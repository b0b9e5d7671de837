package catalogue

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/hashicorp/hcl/v2"
)

// ociTag is what an OCI tag may be (the distribution spec's grammar).
var ociTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// observations reads a host's observations, max_age and verify block:
// a host whose published observations are read instead of the host.
func observations(h *Host, b *hcl.Block, content *hcl.BodyContent, dir string) hcl.Diagnostics {
	a := content.Attributes
	diags := str(a["observations"], &h.Observations)
	owner := fmt.Sprintf("host %q", h.Name)
	for _, vb := range content.Blocks {
		if h.Verify != nil {
			diags = append(diags, errorf(vb.DefRange, "Duplicate verify block", "Host %q has a verify block already at %s. Merge the two.", h.Name, h.Verify.DeclRange))
			continue
		}
		v, d := verifyBlock(vb, dir, owner)
		diags = append(diags, d...)
		h.Verify = v
	}
	if at := a["max_age"]; at != nil {
		var text string
		if d := str(at, &text); d.HasErrors() {
			diags = append(diags, d...)
		} else if age, err := time.ParseDuration(text); err != nil || age <= 0 {
			diags = append(diags, errorf(at.Expr.Range(), "Invalid max_age", "max_age of host %q is %q: write a positive duration, such as \"30m\" or \"2h\" (the longest an observation may have been read before the run).", h.Name, text))
		} else {
			h.MaxAge = age
		}
	}
	if h.Observations == "" {
		if a["observations"] == nil {
			for _, only := range []string{"max_age"} {
				if oa := a[only]; oa != nil {
					diags = append(diags, errorf(oa.Range, "max_age without observations", "Host %q is read live; max_age bounds the age of published observations. Write observations = \"oci://…\" (or a file or folder), or remove max_age.", h.Name))
				}
			}
			if h.Verify != nil {
				diags = append(diags, errorf(h.Verify.DeclRange, "verify without observations", "Host %q is read live: there is nothing of it to verify. A host's verify block names who signs its published observations: write observations = \"oci://…\", or remove the block.", h.Name))
			}
		}
		return diags
	}
	r := a["observations"].Expr.Range()
	for _, other := range []string{"docker", "snapshot", "cert_path", "tls_verify", "context", "kubernetes"} {
		if oa := a[other]; oa != nil {
			diags = append(diags, errorf(oa.Range, "Conflicting host sources", "Host %q names both observations and %s. A host is read live or from what it publishes: keep observations (and have the host run pin observe), or drop it and read the host live.", h.Name, other))
		}
	}
	if h.Verify == nil {
		diags = append(diags, errorf(r, "Unverified observations", "Host %q reads its observations from %s with nothing to verify them against: anyone who can write there would decide what the host runs. Add a verify block: verify { keys = [\"fleet.pub\"] } (the public key of the key pin observe signs with), or a keyless identity with an OCI reference.", h.Name, h.Observations))
	}
	if repo, ok := strings.CutPrefix(h.Observations, "oci://"); ok {
		last := repo[strings.LastIndex(repo, "/")+1:]
		if _, err := name.NewRepository(repo, name.StrictValidation); err != nil || !strings.Contains(repo, "/") || strings.Contains(repo, "@") || strings.Contains(last, ":") {
			diags = append(diags, errorf(r, "Invalid observations reference", "%q is not an OCI repository. Write oci://registry.example.org/fleet/observations, without a tag: each host's observation is tagged with its name.", h.Observations))
		}
		if !ociTag.MatchString(h.Name) {
			diags = append(diags, errorf(b.LabelRanges[0], "Host name is not a tag", "Host %q publishes to an OCI repository under the tag of its name, and %q cannot be one: use letters, digits, '_', '.' and '-', at most 128, not starting with '.' or '-'.", h.Name, h.Name))
		}
		return diags
	}
	if v := h.Verify; v != nil && len(v.Keys) == 0 && (v.Issuer != "" || v.Subject != "" || v.SubjectRegex != nil || v.TrustedRoot != "") {
		diags = append(diags, errorf(h.Verify.DeclRange, "Keyless observations need an OCI reference", "Host %q reads observations from a file, whose signature (cosign sign-blob) carries no certificate to check an identity against. Verify them with keys = [\"fleet.pub\"], or publish them to oci://… and sign with cosign keyless.", h.Name))
	}
	if !filepath.IsAbs(h.Observations) {
		h.Observations = filepath.Join(dir, h.Observations)
	}
	return diags
}
