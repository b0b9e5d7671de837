package registry

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The sightings are one file, <cache>/seen, of lines
//
//	<repository> <tag> <digest> <unix seconds>
//
// ("registry.example.org/forge/forgejo 1.27.3 sha256:… 1764547200"): the
// first time pin saw digest under repository:tag, for min_age (package
// resolve's Sightings). It is pin's own clock for a candidate's age, which
// no publisher writes: an image's created date is the publisher's claim.
// A line is appended, with one write, the first time a digest is seen
// under a tag, and again only when a run's clock is earlier than the time
// kept (a run with an injected clock): reading takes the earliest time of
// each. Nothing is removed; a line cut short reads as garbage and is
// skipped, and a sighting lost is a digest first seen again, which only
// waits longer.

// seenKey is a repository, a tag and a digest.
type seenKey struct{ repo, tag, digest string }

// sightings is what the seen file holds, read once.
type sightings struct {
	once sync.Once
	mu   sync.Mutex
	at   map[seenKey]time.Time
	w    sync.Mutex // held while appending
	file appender
}

func (c *Cache) seenPath() string { return filepath.Join(c.dir, "seen") }

// FirstSeen returns when digest was first seen under repo:tag (repo a full
// repository name), recording now as that time when it never was, or when
// now is earlier than the time kept. A nil Cache remembers nothing: every
// digest is first seen now.
func (c *Cache) FirstSeen(repo, tag, digest string, now time.Time) time.Time {
	now = now.UTC().Truncate(time.Second)
	if c == nil || !validHint(repo, tag) || !validDigest(digest) {
		return now
	}
	s := &c.seen
	s.once.Do(func() { s.load(c) })
	k := seenKey{repo, tag, digest}
	s.mu.Lock()
	first, ok := s.at[k]
	if ok && !now.Before(first) {
		s.mu.Unlock()
		return first
	}
	s.at[k] = now
	s.mu.Unlock()
	s.w.Lock()
	defer s.w.Unlock()
	if f, _ := s.file.file(c); f != nil {
		f.WriteString(repo + " " + tag + " " + digest + " " + strconv.FormatInt(now.Unix(), 10) + "\n")
	}
	return now
}

// load reads the seen file, the earliest time of each line's key winning.
func (s *sightings) load(c *Cache) {
	s.at = map[seenKey]time.Time{}
	s.file.path = c.seenPath()
	b, err := readFile(c.seenPath())
	if err != nil {
		return
	}
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		f := strings.Fields(string(line))
		if len(f) != 4 || !validHint(f[0], f[1]) || !validDigest(f[2]) {
			continue
		}
		sec, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			continue
		}
		t := time.Unix(sec, 0).UTC()
		k := seenKey{f[0], f[1], f[2]}
		if first, ok := s.at[k]; !ok || t.Before(first) {
			s.at[k] = t
		}
	}
}

// FirstSeen is the cache's (Cache.FirstSeen): the first time pin saw
// digest under repo:tag, now when never before.
func (r *Remote) FirstSeen(repo, tag, digest string, now time.Time) time.Time {
	return r.cache.FirstSeen(repo, tag, digest, now)
}

// FirstSeen is the cache's (Cache.FirstSeen).
func (o Offline) FirstSeen(repo, tag, digest string, now time.Time) time.Time {
	return o.Cache.FirstSeen(repo, tag, digest, now)
}

// FirstSeen is the Sightings cache's (Cache.FirstSeen): a mirror keeps
// no history of its own.
func (l *Layout) FirstSeen(repo, tag, digest string, now time.Time) time.Time {
	return l.Sightings.FirstSeen(repo, tag, digest, now)
}
