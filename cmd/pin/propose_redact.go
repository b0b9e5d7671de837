package main

import (
	"context"
	"os"

	"github.com/pin-tool/pin/internal/git"
	"github.com/pin-tool/pin/internal/propose"
)

// redactor is what pin propose keeps out of everything it prints: the
// credentials of --remote (a URL, or the URL git has for the remote
// named), of --forge-url, and the API tokens it may read.
func (o *proposeOptions) redactor(ctx context.Context) *propose.Redactor {
	urls := []string{o.Remote, o.ForgeURL, os.Getenv("GITHUB_API_URL")}
	if wd, err := os.Getwd(); err == nil {
		if u, err := (git.Git{}).RemoteURL(ctx, wd, o.Remote); err == nil {
			urls = append(urls, u)
		}
	}
	var tokens []string
	for _, e := range []string{"GITHUB_TOKEN", "GH_TOKEN", "GITEA_TOKEN", o.TokenEnv} {
		if e != "" {
			tokens = append(tokens, os.Getenv(e))
		}
	}
	return propose.NewRedactor(urls, tokens)
}
