package catalogue

import (
	"path/filepath"
	"regexp"

	"github.com/hashicorp/hcl/v2"
)

var verifySchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "keys"}, {Name: "issuer"}, {Name: "subject"}, {Name: "subject_regex"}, {Name: "trusted_root"},
	{Name: "match_repository"},
}}

// Verify is a verify block: the signatures an image needs to win. Keys
// are cosign public keys (PEM files, absolute); or Issuer with Subject or
// SubjectRegex names a keyless signer, checked against TrustedRoot (a
// Sigstore trusted-root JSON file). MatchRepository also requires what
// was signed to name the module's repository (off by default, as in
// cosign). Room is left for other methods (Notation) as further
// attributes.
type Verify struct {
	Keys            []string
	Issuer          string
	Subject         string
	SubjectRegex    *regexp.Regexp
	TrustedRoot     string
	MatchRepository bool
	DeclRange       hcl.Range
}

// verifyBlock reads a verify block of a module or a registry; paths are
// relative to dir.
func verifyBlock(b *hcl.Block, dir, owner string) (*Verify, hcl.Diagnostics) {
	v := &Verify{DeclRange: b.DefRange}
	content, diags := b.Body.Content(verifySchema)
	a := content.Attributes
	diags = append(diags, strList(a["keys"], &v.Keys)...)
	diags = append(diags, str(a["issuer"], &v.Issuer)...)
	diags = append(diags, str(a["subject"], &v.Subject)...)
	diags = append(diags, str(a["trusted_root"], &v.TrustedRoot)...)
	diags = append(diags, boolean(a["match_repository"], &v.MatchRepository)...)
	var re string
	diags = append(diags, str(a["subject_regex"], &re)...)
	if re != "" {
		r, err := regexp.Compile(re)
		if err != nil {
			diags = append(diags, errorf(a["subject_regex"].Expr.Range(), "Invalid subject_regex", "subject_regex of %s: %v. Write a Go regular expression, such as \"^https://github.com/example/.*\".", owner, err))
		}
		v.SubjectRegex = r
	}
	for i, k := range v.Keys {
		if !filepath.IsAbs(k) {
			v.Keys[i] = filepath.Join(dir, k)
		}
	}
	if v.TrustedRoot != "" && !filepath.IsAbs(v.TrustedRoot) {
		v.TrustedRoot = filepath.Join(dir, v.TrustedRoot)
	}
	keyless := v.Issuer != "" || v.Subject != "" || re != "" || v.TrustedRoot != ""
	switch {
	case len(v.Keys) > 0 && keyless:
		diags = append(diags, errorf(b.DefRange, "Two verify methods", "The verify block of %s names keys and a keyless identity. Keep keys = [\"cosign.pub\"] for key-signed images, or issuer, subject and trusted_root for keyless ones.", owner))
	case len(v.Keys) == 0 && !keyless && !diags.HasErrors():
		diags = append(diags, errorf(b.DefRange, "Empty verify block", "The verify block of %s names no signer. Write keys = [\"cosign.pub\"], or issuer = \"https://token.actions.githubusercontent.com\", subject = \"…\" and trusted_root = \"trusted_root.json\".", owner))
	case keyless && (v.Issuer == "" || (v.Subject == "" && re == "") || v.TrustedRoot == ""):
		diags = append(diags, errorf(b.DefRange, "Incomplete keyless identity", "The verify block of %s needs issuer, subject or subject_regex, and trusted_root (a Sigstore trusted-root JSON file, read offline).", owner))
	case a["subject"] != nil && re != "":
		diags = append(diags, errorf(b.DefRange, "Two subjects", "The verify block of %s names subject and subject_regex: keep one.", owner))
	}
	return v, diags
}

// allowUnverified reads a module's allow_unverified: a reason in words,
// as allow_downgrade's, for it goes into the lock.
func allowUnverified(a *hcl.Attribute, m *Module) hcl.Diagnostics {
	if a == nil {
		return nil
	}
	diags := str(a, &m.AllowUnverified)
	r := a.Expr.Range()
	m.allowUnverifiedAt = &r
	if !diags.HasErrors() && !HasWords(m.AllowUnverified) {
		diags = append(diags, errorf(r, "Empty reason to keep an unverified image",
			"allow_unverified takes the reason, in words (letters or digits), to keep module %q's locked image once it can no longer be verified (its signature deleted, its key rotated out, its identity changed), and the reason goes into the lock; this one has none: it is blank, or only spaces or characters nobody sees. Write the reason, or remove allow_unverified.", m.Name))
	}
	return diags
}

// unverifiedWithoutPolicy: allow_unverified on a module with no verify
// policy (its own block, or its registry's) would accept nothing.
func unverifiedWithoutPolicy(m *Module) hcl.Diagnostics {
	if m.allowUnverifiedAt == nil || m.Verify != nil {
		return nil
	}
	return hcl.Diagnostics{errorf(*m.allowUnverifiedAt, "allow_unverified without a verify policy",
		"Module %q has allow_unverified but no verify block (of its own, or of its registry's): no image of it is verified, so there is nothing to keep unverified. Add a verify block, or remove allow_unverified.", m.Name)}
}
