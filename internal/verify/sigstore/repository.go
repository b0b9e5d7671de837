package sigstore

import (
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/pin-tool/pin/internal/verify"
)

// otherRepository is, under the policy's repository binding
// (verify.Spec.MatchRepository), the failure of a signature by who whose
// signed document names the repositories named (a simple-signing
// payload's docker-reference; a bundle statement's subject names) and
// not repo, the repository the image is read for; nil when one of them
// is repo, or when the policy does not bind. Names compare as registries
// do: "nginx", "docker.io/library/nginx" and
// "index.docker.io/library/nginx" are one repository, and a reference's
// tag or digest is not part of it.
func (p *Policy) otherRepository(digest, repo, who string, named []string) *verify.Failure {
	if !p.repository {
		return nil
	}
	want := canonical(repo)
	var others []string
	for _, n := range named {
		if n == "" {
			continue
		}
		if canonical(n) == want {
			return nil
		}
		others = append(others, n)
	}
	detail := "signed by " + who + " for " + strings.Join(others, ", ") + ", not " + repo
	if len(others) == 0 {
		detail = "signed by " + who + ", but what it signed names no repository (match_repository needs a signature that names " + repo +
			"; cosign's bundle format signs the digest alone, its tag scheme and classic referrers name the repository)"
	}
	return &verify.Failure{Digest: digest, Reason: verify.OtherRepository, Detail: detail}
}

// canonical is the repository a reference names, as the registry client
// spells it; the reference itself when it does not parse.
func canonical(ref string) string {
	if r, err := name.ParseReference(ref); err == nil {
		return r.Context().Name()
	}
	if r, err := name.NewRepository(ref); err == nil {
		return r.Name()
	}
	return ref
}
