package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ringOptions are dumpcap's -b: when a capture written with -w moves on
// to its next file, and how many files it keeps.
type ringOptions struct {
	fileSize int64         // bytes (filesize:N is in kB of 1000 bytes, as dumpcap's)
	duration time.Duration // duration:S
	files    int           // files:K
}

func (r ringOptions) on() bool { return r.fileSize > 0 || r.duration > 0 || r.files > 0 }

// parseRing reads -b values: filesize:N (kB), duration:S (seconds, or a Go
// duration such as 30s), files:K.
func parseRing(vals []string) (ringOptions, error) {
	var r ringOptions
	for _, v := range vals {
		key, val, ok := strings.Cut(v, ":")
		if !ok {
			return r, fmt.Errorf("-b %s: want filesize:N, duration:S or files:K", v)
		}
		switch key {
		case "filesize":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n <= 0 {
				return r, fmt.Errorf("-b filesize:%s: want a positive number of kB (1000 bytes)", val)
			}
			r.fileSize = n * 1000
		case "duration":
			d, err := parseSeconds(val)
			if err != nil {
				return r, fmt.Errorf("-b duration:%s: %v", val, err)
			}
			r.duration = d
		case "files":
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 {
				return r, fmt.Errorf("-b files:%s: want a positive number of files", val)
			}
			r.files = n
		default:
			return r, fmt.Errorf("-b %s: rdmashark knows filesize:N, duration:S and files:K", v)
		}
	}
	if r.files > 0 && r.fileSize == 0 && r.duration == 0 {
		return r, fmt.Errorf("-b files:%d needs filesize:N or duration:S to say when to move on", r.files)
	}
	return r, nil
}

// stopOptions are dumpcap's -a: when the capture stops.
type stopOptions struct {
	duration time.Duration
	packets  int
}

// parseStop reads -a values: duration:S, packets:N.
func parseStop(vals []string) (stopOptions, error) {
	var s stopOptions
	for _, v := range vals {
		key, val, ok := strings.Cut(v, ":")
		if !ok {
			return s, fmt.Errorf("-a %s: want duration:S or packets:N", v)
		}
		switch key {
		case "duration":
			d, err := parseSeconds(val)
			if err != nil {
				return s, fmt.Errorf("-a duration:%s: %v", val, err)
			}
			s.duration = d
		case "packets":
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 {
				return s, fmt.Errorf("-a packets:%s: want a positive number of packets", val)
			}
			s.packets = n
		default:
			return s, fmt.Errorf("-a %s: rdmashark knows duration:S and packets:N", v)
		}
	}
	return s, nil
}

// parseSeconds reads dumpcap's seconds (a number, fractions allowed) or a
// Go duration (30s, 5m).
func parseSeconds(v string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f <= 0 {
			return 0, fmt.Errorf("want a positive number of seconds")
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive number of seconds (or 30s, 5m)")
	}
	return d, nil
}

// lowestPositive is the smaller of two limits, 0 meaning none.
func lowestPositive[T int | time.Duration](a, b T) T {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}
