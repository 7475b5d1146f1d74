package main

import (
	"context"
	"errors"
	"io"
	"testing"
)

// TestCtxReader: data written before the signal is read; then a read that
// waits on a writer that writes nothing more returns errInterrupted once
// the context ends, and keeps returning it.
func TestCtxReader(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r := newCtxReader(ctx, pr, nil)
	go pw.Write([]byte("hello"))
	buf := make([]byte, 16)
	n, err := r.Read(buf)
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("%q %v", buf[:n], err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.Read(buf)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, errInterrupted) {
		t.Fatalf("after cancel: %v", err)
	}
	if _, err := r.Read(buf); !errors.Is(err, errInterrupted) {
		t.Fatalf("next read: %v", err)
	}
	// EOF and errors of the input pass through.
	pr2, pw2 := io.Pipe()
	r2 := newCtxReader(context.Background(), pr2, nil)
	pw2.Close()
	if _, err := r2.Read(buf); err != io.EOF {
		t.Fatalf("EOF: %v", err)
	}
	// An input that cannot be opened says so on the first read.
	r3 := newCtxReader(context.Background(), nil, func() (io.ReadCloser, error) { return nil, io.ErrClosedPipe })
	if _, err := r3.Read(buf); err != io.ErrClosedPipe {
		t.Fatalf("open error: %v", err)
	}
}
