package registry

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// The pack is one file, <cache>/blobs.pack, that every run appends the
// manifests and configs it fetches to, a record each:
//
//	blob sha256:<hex> <length>\n<content>\n
//
// written with one write on a file opened for appending, so that no file
// is created per blob: creating a file was most of a cold run's CPU on an
// ext4 disk (about a millisecond of system time each, under
// load). A process reads the pack's records' headers once, skipping their
// content, into an index of digest → offset, and reads a blob with one
// positioned read. Content is verified against its digest on every read,
// as before: a record cut short by a crash, two records run together, a
// tampered byte are never believed; the blob is fetched again and
// appended, and the later record wins.
//
// The index is shared by the Caches of one process on one folder, and
// each Cache reads only what was appended since the index was last read
// (pin admit, which loads its sources per decision, reads the pack once).

// packName is the pack's file name in the cache folder.
const packName = "blobs.pack"

// packKey is a sha256 digest's 32 bytes.
type packKey [32]byte

// span is where a blob's content is in the pack.
type span struct{ off, n int64 }

// packIndex is what a process knows of one pack file.
type packIndex struct {
	path    string
	mu      sync.Mutex
	spans   map[packKey]span
	scanned int64 // bytes of the file read into spans
	// mine are the records this process appended, whole: not appended
	// again when two modules fetch the same content.
	mine map[packKey]bool
	// r and w are the pack opened for reading and for appending, once per
	// process: opening and closing the file for every blob was 7% of a
	// warm 1,100-module resolve's CPU. Positioned reads on one
	// file are safe from many goroutines.
	r *os.File
	w appender
	// wmu is held from an append's write to reading where it ended.
	wmu sync.Mutex
}

var packIndexes sync.Map // pack path → *packIndex

func (c *Cache) pack() *packIndex {
	c.packOnce.Do(func() {
		path := filepath.Join(c.dir, packName)
		v, _ := packIndexes.LoadOrStore(path, &packIndex{path: path, spans: map[packKey]span{}, mine: map[packKey]bool{}, w: appender{path: path}})
		c.packIdx = v.(*packIndex)
		c.packIdx.catchUp()
	})
	return c.packIdx
}

func keyOf(digest string) (packKey, bool) {
	var k packKey
	if !validDigest(digest) {
		return k, false
	}
	_, err := hex.Decode(k[:], []byte(digest[len("sha256:"):]))
	return k, err == nil
}

// catchUp reads the headers of the records appended since the last read.
func (p *packIndex) catchUp() {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.Open(p.path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(p.scanned, io.SeekStart); err != nil {
		return
	}
	r := bufio.NewReaderSize(f, 64<<10)
	pos := p.scanned
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return // the end, or a record cut short: read it again later
		}
		pos += int64(len(line))
		k, n, ok := parseRecordHeader(line)
		if !ok {
			// Garbage (a record cut short and another run into it): skip
			// the line; the next header is found at a line's start.
			p.scanned = pos
			continue
		}
		if d, err := r.Discard(int(n)); err != nil || d != int(n) {
			return // cut short at the end of the file: read it again later
		}
		end, err := r.ReadByte()
		if err != nil {
			return
		}
		if end == '\n' { // else the record was cut short and another run into it
			p.spans[k] = span{off: pos, n: n}
		}
		pos += n + 1
		p.scanned = pos
	}
}

// parseRecordHeader reads "blob sha256:<hex> <length>\n".
func parseRecordHeader(line []byte) (packKey, int64, bool) {
	var k packKey
	rest, ok := bytes.CutPrefix(line, []byte("blob "))
	if !ok {
		return k, 0, false
	}
	d, size, ok := bytes.Cut(bytes.TrimSuffix(rest, []byte("\n")), []byte(" "))
	if !ok {
		return k, 0, false
	}
	k, ok = keyOf(string(d))
	if !ok {
		return k, 0, false
	}
	n, err := strconv.ParseInt(string(size), 10, 64)
	if err != nil || n < 0 || n > maxManifestSize {
		return k, 0, false
	}
	return k, n, true
}

// read returns the content the index has for digest, unverified.
func (p *packIndex) read(k packKey) ([]byte, bool) {
	p.mu.Lock()
	s, ok := p.spans[k]
	p.mu.Unlock()
	if !ok {
		return nil, false
	}
	f := p.reader()
	if f == nil {
		return nil, false
	}
	b := make([]byte, s.n)
	if _, err := f.ReadAt(b, s.off); err != nil {
		return nil, false
	}
	return b, true
}

// reader returns the pack opened for reading, opened on first use; nil
// when there is no pack.
func (p *packIndex) reader() *os.File {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.r == nil {
		p.r, _ = os.Open(p.path)
	}
	return p.r
}

// writer returns the pack opened for appending (see appender). When the
// file it had is no longer the pack, the index starts afresh on the new
// one. Its caller holds p.wmu.
func (p *packIndex) writer(c *Cache) *os.File {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, replaced := p.w.file(c)
	if replaced {
		if p.r != nil {
			p.r.Close()
		}
		p.r = nil
		p.spans, p.mine, p.scanned = map[packKey]span{}, map[packKey]bool{}, 0
	}
	return f
}

// spoilt forgets that this process appended k's record whole: it failed
// verification since (tampered with), so put appends it again.
func (p *packIndex) spoilt(k packKey) {
	p.mu.Lock()
	delete(p.mine, k)
	p.mu.Unlock()
}

// append writes b as the content of k at the pack's end, with one write,
// and indexes it.
func (p *packIndex) append(c *Cache, digest string, k packKey, b []byte) {
	p.mu.Lock()
	done := p.mine[k]
	p.mu.Unlock()
	if done {
		return
	}
	rec := make([]byte, 0, len(b)+100)
	rec = append(rec, "blob "...)
	rec = append(rec, digest...)
	rec = append(rec, ' ')
	rec = strconv.AppendInt(rec, int64(len(b)), 10)
	rec = append(rec, '\n')
	rec = append(rec, b...)
	rec = append(rec, '\n')
	p.wmu.Lock()
	defer p.wmu.Unlock()
	f := p.writer(c)
	if f == nil {
		return
	}
	if n, err := f.Write(rec); err != nil || n != len(rec) {
		return
	}
	// Appending leaves the offset at the end of what this write wrote.
	end, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return
	}
	p.mu.Lock()
	p.spans[k] = span{off: end - int64(len(b)) - 1, n: int64(len(b))}
	p.mine[k] = true
	p.mu.Unlock()
}
