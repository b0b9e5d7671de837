// Command pinimage builds pin's container image (see package release) and
// pushes it to a registry or writes it to a tarball that "docker load"
// reads:
//
//	go run ./internal/release/cmd/pinimage --push REGISTRY/pin:TAG
//	go run ./internal/release/cmd/pinimage --tarball pin.tar --tag pin:dev
//
// Run it from the repository's root. The version and revision labels come
// from --version (default "devel") and git; the creation date is the
// commit's, so that a rebuild of one commit gives the same digest.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/pin-tool/pin/internal/release"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "pinimage: %s\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("pinimage", flag.ContinueOnError)
	push := fs.String("push", "", "push the image to this reference (registry/repository:tag)")
	tarPath := fs.String("tarball", "", "write the image to this tarball instead (for docker load)")
	tag := fs.String("tag", "pin:dev", "the tag recorded in the tarball")
	arch := fs.String("arch", "amd64", "GOARCH of the binary and the image")
	version := fs.String("version", "devel", "pin's version, for the labels")
	insecure := fs.Bool("insecure", false, "push over plain HTTP")
	noCerts := fs.Bool("no-ca-certs", false, "leave out the host's CA bundle (then pin can reach only plain-HTTP registries, layout mirrors and snapshots)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*push == "") == (*tarPath == "") {
		return errors.New("write exactly one of --push REF or --tarball FILE")
	}
	o := release.Options{Arch: *arch, Version: *version, Revision: git("rev-parse", "HEAD")}
	if ts, err := strconv.ParseInt(git("log", "-1", "--format=%ct"), 10, 64); err == nil {
		o.Created = time.Unix(ts, 0)
	}
	if !*noCerts {
		o.CACerts = release.HostCACerts()
	}
	bin, err := release.BuildBinary(ctx, ".", o)
	if err != nil {
		return err
	}
	img, err := release.Image(bin, o)
	if err != nil {
		return err
	}
	var nopts []name.Option
	if *insecure {
		nopts = append(nopts, name.Insecure)
	}
	if *push != "" {
		ref, err := name.ParseReference(*push, nopts...)
		if err != nil {
			return err
		}
		if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return fmt.Errorf("pushing %s: %w", ref, err)
		}
		d, _ := img.Digest()
		fmt.Printf("%s@%s\n", ref.Context().Name(), d)
		return nil
	}
	t, err := name.NewTag(*tag, nopts...)
	if err != nil {
		return err
	}
	return tarball.WriteToFile(*tarPath, t, img)
}

// git runs git in the working folder; "" when it fails (no checkout).
func git(args ...string) string {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
