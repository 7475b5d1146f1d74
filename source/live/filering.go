package live

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FileRingConfig is dumpcap's -b: when a capture moves on to its next
// pcapng file, and how many it keeps.
type FileRingConfig struct {
	// Path names the files: "dir/name.pcapng" writes
	// dir/name_00001_20060102150405.pcapng, then _00002_…, as dumpcap
	// does (the extension defaults to .pcapng).
	Path string
	// FileSize moves on once a file holds that many bytes (0: no limit).
	FileSize int64
	// Duration moves on once a file was open that long (0: no limit).
	Duration time.Duration
	// Files keeps only the newest that many files, deleting the oldest
	// (0: all).
	Files int
	// Info describes the capture in each file's headers.
	Info SaverInfo
	// Stats, when set, gives the kernel's counters since the capture
	// began, written into each file's Interface Statistics Block as it
	// closes.
	Stats func() Stats
}

// FileRing writes a capture into a sequence of pcapng files, each a whole
// readable file on its own (section header, interface, frames, and an
// Interface Statistics Block with the kernel's counters so far when it
// closes). It is a FrameWriter.
type FileRing struct {
	cfg    FileRingConfig
	prefix string
	ext    string
	seq    int
	cur    *Saver
	file   *os.File
	opened time.Time
	names  []string
	err    error
}

// NewFileRing opens the first file.
func NewFileRing(cfg FileRingConfig) (*FileRing, error) {
	if cfg.Path == "" {
		return nil, errors.New("ring buffer: no file name")
	}
	if cfg.Info.Start.IsZero() {
		cfg.Info.Start = time.Now()
	}
	r := &FileRing{cfg: cfg}
	r.ext = filepath.Ext(cfg.Path)
	if r.ext == "" {
		r.ext = ".pcapng"
	}
	r.prefix = strings.TrimSuffix(cfg.Path, filepath.Ext(cfg.Path))
	if err := r.open(time.Now()); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *FileRing) open(now time.Time) error {
	r.seq++
	name := fmt.Sprintf("%s_%05d_%s%s", r.prefix, r.seq, now.Format("20060102150405"), r.ext)
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	s, err := NewSaver(f, r.cfg.Info)
	if err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", name, err)
	}
	r.cur, r.file, r.opened = s, f, now
	r.names = append(r.names, name)
	if r.cfg.Files > 0 {
		for len(r.names) > r.cfg.Files {
			if err := os.Remove(r.names[0]); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			r.names = r.names[1:]
		}
	}
	return nil
}

// closeCurrent writes the statistics block and closes the current file.
func (r *FileRing) closeCurrent() error {
	var st *Stats
	if r.cfg.Stats != nil {
		s := r.cfg.Stats()
		st = &s
	}
	err := r.cur.Close(st)
	if cerr := r.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", r.file.Name(), err)
	}
	return nil
}

func (r *FileRing) due(now time.Time) bool {
	if r.cur.Packets() == 0 {
		return false
	}
	return (r.cfg.FileSize > 0 && r.cur.Size() >= r.cfg.FileSize) ||
		(r.cfg.Duration > 0 && now.Sub(r.opened) >= r.cfg.Duration)
}

func (r *FileRing) rotate(now time.Time) error {
	if err := r.closeCurrent(); err != nil {
		return err
	}
	return r.open(now)
}

// WritePacket adds a frame, to the next file when the current one is full.
func (r *FileRing) WritePacket(info Info, data []byte) error {
	if r.err != nil {
		return r.err
	}
	if r.cfg.FileSize > 0 || r.cfg.Duration > 0 {
		if now := time.Now(); r.due(now) {
			if r.err = r.rotate(now); r.err != nil {
				return r.err
			}
		}
	}
	if r.err = r.cur.WritePacket(info, data); r.err != nil {
		return r.err
	}
	return nil
}

// Flush flushes the current file, and moves on when its time is up.
func (r *FileRing) Flush() error {
	if r.err != nil {
		return r.err
	}
	if r.err = r.cur.Flush(); r.err != nil {
		return r.err
	}
	if now := time.Now(); r.cfg.Duration > 0 && r.due(now) {
		r.err = r.rotate(now)
	}
	return r.err
}

// Close closes the last file.
func (r *FileRing) Close() error {
	if r.err != nil {
		r.file.Close()
		return r.err
	}
	r.err = r.closeCurrent()
	if r.err == nil {
		r.err = errors.New("ring buffer closed")
		return nil
	}
	return r.err
}

// Files are the names of the files kept, oldest first.
func (r *FileRing) Files() []string { return append([]string(nil), r.names...) }
