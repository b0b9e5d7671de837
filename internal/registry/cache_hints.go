package registry

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
)

// The hints are one file, <cache>/hints, of lines
//
//	<repository> <tag> <digest>
//
// ("127.0.0.1:5000/forge/forgejo 1.27.3 sha256:…"; "-" for the digest
// when the tag is gone). A Cache reads the file once, the last line of a
// repository and tag winning, and appends a line, with one write on a file
// opened for appending, for each hint that changes: no file is created
// per hint, which cost half a millisecond of CPU each on an ext4 disk.
// Processes sharing the cache append concurrently; a line a crash cut
// short, or two lines run together, read as garbage and are skipped: a
// hint is never trusted, so a lost one costs a GET instead of a HEAD.
//
// When the file holds more than twice as many lines as hints (and more
// than compactHintsAbove lines), reading it compacts it: the live hints, sorted,
// through a temporary file and a rename. A line another process appends
// meanwhile may be lost, which costs as much as above.

// hintKey is a repository and a tag.
type hintKey struct{ repo, tag string }

// compactHintsAbove is the number of lines below which the hints file is
// never compacted.
const compactHintsAbove = 1024

func (c *Cache) hintsPath() string { return filepath.Join(c.dir, "hints") }

// validHint reports whether repo and tag can be written on a hints line:
// a full repository name (a host, then a path of non-empty components
// other than "." and ".."), a tag with no separator, neither with blanks.
func validHint(repo, tag string) bool {
	if tag == "" || strings.ContainsAny(tag, " \t\r\n/\\") || strings.ContainsAny(repo, " \t\r\n") {
		return false
	}
	_, path, ok := strings.Cut(repo, "/")
	if !ok {
		return false
	}
	for part := range strings.SplitSeq(path, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}

// loadHints reads the hints file once.
func (c *Cache) loadHints() {
	c.hintsOnce.Do(func() {
		c.hints = map[hintKey]string{}
		b, err := readFile(c.hintsPath())
		if err != nil {
			return
		}
		lines := 0
		for line := range bytes.SplitSeq(b, []byte{'\n'}) {
			f := strings.Fields(string(line))
			if len(f) != 3 || !validHint(f[0], f[1]) {
				continue
			}
			lines++
			k := hintKey{f[0], f[1]}
			if f[2] == "-" {
				delete(c.hints, k)
				continue
			}
			if _, ok := c.blobPath(f[2]); ok {
				c.hints[k] = f[2]
			}
		}
		if lines > compactHintsAbove && lines > 2*len(c.hints) {
			c.writeAtomic(c.hintsPath(), c.hintLines())
		}
	})
}

// hintLines is every live hint, a line each, sorted.
func (c *Cache) hintLines() []byte {
	lines := make([]string, 0, len(c.hints))
	for k, d := range c.hints {
		lines = append(lines, k.repo+" "+k.tag+" "+d+"\n")
	}
	slices.Sort(lines)
	return []byte(strings.Join(lines, ""))
}

// hint returns the digest repo:tag named when last seen. repo is a full
// repository name ("127.0.0.1:5000/forge/forgejo").
func (c *Cache) hint(repo, tag string) (string, bool) {
	if c == nil || !validHint(repo, tag) {
		return "", false
	}
	c.loadHints()
	c.hintsMu.Lock()
	defer c.hintsMu.Unlock()
	d, ok := c.hints[hintKey{repo, tag}]
	return d, ok
}

// remember records that repo:tag names digest.
func (c *Cache) remember(repo, tag, digest string) {
	if c == nil || !validHint(repo, tag) {
		return
	}
	if _, ok := c.blobPath(digest); !ok {
		return
	}
	c.setHint(repo, tag, digest)
}

// forget drops the hint for repo:tag (the tag is gone).
func (c *Cache) forget(repo, tag string) {
	if c == nil || !validHint(repo, tag) {
		return
	}
	c.setHint(repo, tag, "-")
}

// setHint records digest ("-": none) for repo:tag, and appends it to the
// file when it changes what the file says.
func (c *Cache) setHint(repo, tag, digest string) {
	c.loadHints()
	k := hintKey{repo, tag}
	c.hintsMu.Lock()
	old, had := c.hints[k]
	if digest == "-" {
		delete(c.hints, k)
	} else {
		c.hints[k] = digest
	}
	c.hintsMu.Unlock()
	if (had && old == digest) || (!had && digest == "-") {
		return
	}
	c.appendHint(repo + " " + tag + " " + digest + "\n")
}

// appendHint appends line to the hints file with one write.
func (c *Cache) appendHint(line string) {
	c.hintsW.Lock()
	defer c.hintsW.Unlock()
	if f, _ := c.hintsFile.file(c); f != nil {
		f.WriteString(line)
	}
}
