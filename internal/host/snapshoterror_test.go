package host

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSnapshotErrorPosition: a JSON error in a snapshot names the line and
// column of the offending byte. The oracle is the mark "@" in each input:
// the byte the decoder must stop at (it is replaced by the real byte
// before parsing).
func TestSnapshotErrorPosition(t *testing.T) {
	for _, tc := range []struct{ name, data, real string }{
		{"pin: syntax", "{\n  \"schema\": 1,\n  \"host\" @ \"x\"\n}", "="},
		{"pin: syntax after leading blank lines", "\n\n  {\"schema\": @}", "}"},
		{"pin: wrong type", "{\n  \"schema\": 1,\n  \"containers\": [\n    {\"name\": 5@}\n  ]\n}", " "},
		{"pin: data after the object", "{\"schema\": 1, \"containers\": [], \"images\": []}\n\n   @x", "{"},
		{"inspect: syntax", "[\n  {\"Id\": \"sha256:1\"},\n  {\"Id\" @ 1}\n]", "="},
		{"inspect: wrong type", "  [\n  {\"Id\": \"sha256:1\", \"RepoTags\": 7@}\n]", " "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := strings.Index(tc.data, "@")
			data := tc.data[:at] + tc.real + tc.data[at+1:]
			wantLine := strings.Count(tc.data[:at], "\n") + 1
			wantCol := at - (strings.LastIndex(tc.data[:at], "\n") + 1) + 1
			// A wrong type is reported after the value: the mark is the
			// byte after it, and the position is the value's last byte.
			if strings.Contains(tc.name, "wrong type") {
				wantCol--
			}
			_, err := ParseSnapshot([]byte(data), "x")
			var se *SnapshotError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SnapshotError", err)
			}
			t.Logf("%v", err)
			if se.Line != wantLine || se.Column != wantCol {
				t.Errorf("position = line %d, column %d; want line %d, column %d (err %v)", se.Line, se.Column, wantLine, wantCol, err)
			}
			if !errors.Is(err, ErrBadSnapshot) {
				t.Errorf("err %v is not ErrBadSnapshot", err)
			}
		})
	}
}

// TestSnapshotFileErrors: SnapshotFile.Observe names the host and the file
// in every error, and tells malformed content from a missing file.
func TestSnapshotFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "mesh-1.json")
	if err := os.WriteFile(bad, []byte("{\n  \"schema\": 1,\n  \"containers\": [}\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := SnapshotFile{HostName: "mesh-1", Path: bad}.Observe(context.Background())
	var se *SnapshotError
	if !errors.As(err, &se) {
		t.Fatalf("malformed file: err = %v, want a *SnapshotError", err)
	}
	if !errors.Is(err, ErrBadSnapshot) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("malformed file: err %v is not ErrBadSnapshot, or is fs.ErrNotExist", err)
	}
	if se.Path != bad || se.Host != "mesh-1" || se.Line != 3 || se.Column != 18 {
		t.Errorf("malformed file: error %+v, want path %s, host mesh-1, line 3, column 18", se, bad)
	}
	if want := "snapshot of host mesh-1 (" + bad + ":3:18): reading pin snapshot: invalid character '}'"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("malformed file: message %q, want it to start with %q", err, want)
	}

	// Malformed without a position: the file is named all the same.
	noState := filepath.Join(dir, "mesh-2.json")
	os.WriteFile(noState, []byte(`{"schema": 1, "containers": [{"name": "a", "image_id": "sha256:1"}], "images": []}`), 0o644)
	_, err = SnapshotFile{HostName: "mesh-2", Path: noState}.Observe(context.Background())
	if want := "snapshot of host mesh-2 (" + noState + "): container \"a\": a container needs a name, an image_id and a state"; err == nil || err.Error() != want {
		t.Errorf("snapshot without a state: err %v, want %q", err, want)
	}
	if !errors.Is(err, ErrBadSnapshot) {
		t.Errorf("snapshot without a state: err %v is not ErrBadSnapshot", err)
	}

	missing := filepath.Join(dir, "gone.json")
	_, err = SnapshotFile{HostName: "gone", Path: missing}.Observe(context.Background())
	if !errors.As(err, &se) || se.Path != missing || se.Host != "gone" {
		t.Fatalf("missing file: err = %#v, want a *SnapshotError for host gone, path %s", err, missing)
	}
	if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrBadSnapshot) {
		t.Errorf("missing file: err %v, want fs.ErrNotExist and not ErrBadSnapshot", err)
	}
	if want := "reading snapshot of host gone: open " + missing + ": no such file or directory"; err.Error() != want {
		t.Errorf("missing file: message %q, want %q", err, want)
	}

	// A folder in place of the file: unreadable, neither missing nor
	// malformed.
	_, err = SnapshotFile{HostName: "dir", Path: dir}.Observe(context.Background())
	if !errors.As(err, &se) || errors.Is(err, ErrBadSnapshot) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("folder: err %v, want a *SnapshotError, neither ErrBadSnapshot nor fs.ErrNotExist", err)
	}
	if want := "reading snapshot of host dir: read " + dir + ": is a directory"; err.Error() != want {
		t.Errorf("folder: message %q, want %q", err, want)
	}
}

// TestSnapshotErrorMessage: each part of the message is there only when
// known, and a read error that does not name the file gets it added.
func TestSnapshotErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  *SnapshotError
		want string
	}{
		{&SnapshotError{Host: "h", Path: "p.json", Err: errors.New("disk gone")}, "reading snapshot of host h (p.json): disk gone"},
		{&SnapshotError{Path: "p.json", Err: &fs.PathError{Op: "open", Path: "p.json", Err: fs.ErrPermission}}, "reading snapshot: open p.json: permission denied"},
		{&SnapshotError{Err: errors.New("bad"), malformed: true}, "snapshot: bad"},
		{&SnapshotError{Line: 2, Column: 5, Err: errors.New("bad"), malformed: true}, "snapshot (line 2, column 5): bad"},
		{&SnapshotError{Host: "h", Path: "p.json", Line: 2, Column: 5, Err: errors.New("bad"), malformed: true}, "snapshot of host h (p.json:2:5): bad"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
