package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestStorageLayout writes a fleet into a storage folder in
// distribution's layout, starts a real registry (Debian docker-registry)
// on it and reads every tag back: the tag list, each tag's digest, each
// manifest, config and platform manifest, byte for byte what the fleet
// built. It needs docker-registry (scripts/test installs it): skipped
// without, failed under CI.
func TestStorageLayout(t *testing.T) {
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("docker-registry required in CI: not on PATH; run ./scripts/test as root to install it")
		}
		t.Skip("skipping: docker-registry not on PATH; run ./scripts/test as root to install it")
	}
	dir := t.TempDir()
	projects := []*project{
		genProject(16, 30, false, 1), // multi-arch
		genProject(17, 30, false, 1), // multi-arch, shares old releases with 16
		genProject(10, 30, false, 1), // alpine variants
		genProject(3, 30, true, 1),   // at-least-running
	}
	fleet, _, err := seed(context.Background(), "127.0.0.1:1", projects, 2, false, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "data")
	st, err := writeStorage(context.Background(), root, fleet, 2, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if st.Repos != 4 || st.Tags != 120 {
		t.Fatalf("wrote %+v", st)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := filepath.Join(dir, "config.yml")
	yml := fmt.Sprintf("version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\n  cache:\n    blobdescriptor: inmemory\n  maintenance:\n    uploadpurging:\n      enabled: false\nhttp:\n  addr: %s\n", root, addr)
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", cfg)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if i == 100 {
			t.Fatalf("the registry on %s did not answer: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	ctx := context.Background()
	puller, err := remote.NewPuller()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range fleet {
		repo, err := name.NewRepository(addr+"/"+s.p.Repo, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		tags, err := puller.List(ctx, repo)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(s.p.Tags)
		slices.Sort(want)
		slices.Sort(tags)
		if !slices.Equal(tags, want) {
			t.Fatalf("%s: tags %v, want %v", s.p.Repo, tags, want)
		}
		for _, tag := range s.p.Tags {
			bi := s.at(tag)
			desc, err := puller.Get(ctx, repo.Tag(tag))
			if err != nil {
				t.Fatalf("%s:%s: %v", s.p.Repo, tag, err)
			}
			if desc.Digest.String() != bi.digest {
				t.Errorf("%s:%s: digest %s, want %s", s.p.Repo, tag, desc.Digest, bi.digest)
			}
			var img v1.Image
			if desc.MediaType.IsIndex() {
				idx, err := desc.ImageIndex()
				if err != nil {
					t.Fatal(err)
				}
				d, _ := bi.amd64.Digest()
				if img, err = idx.Image(d); err != nil {
					t.Fatalf("%s:%s: the linux/amd64 manifest: %v", s.p.Repo, tag, err)
				}
			} else if img, err = desc.Image(); err != nil {
				t.Fatal(err)
			}
			cn, err := img.ConfigName()
			if err != nil {
				t.Fatal(err)
			}
			if cn.String() != bi.configDigest {
				t.Errorf("%s:%s: config %s, want %s", s.p.Repo, tag, cn, bi.configDigest)
			}
			// The config blob is served and its digest checked by
			// go-containerregistry.
			if _, err := img.RawConfigFile(); err != nil {
				t.Errorf("%s:%s: config blob: %v", s.p.Repo, tag, err)
			}
		}
	}
}
