package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmashark/rdmashark/report"
	"github.com/rdmashark/rdmashark/rpcrdma/nfs"
)

func runStatsJSON(t *testing.T, capture string, specs ...string) *report.Stats {
	t.Helper()
	args := []string{"stats", "--format", "json"}
	for _, s := range specs {
		args = append(args, "-z", s)
	}
	args = append(args, capture)
	var out, errOut bytes.Buffer
	if code := run(args, nil, &out, &errOut); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
	}
	var doc report.Stats
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

func tsharkStats(t *testing.T, base string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tshark", base+".stats.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func capturePath(base string) string {
	return filepath.Join("..", "..", "testdata", "pcaps", base+".pcap")
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestStatsIOStatAsTshark: `stats -z io,stat,1` has tshark's frames and
// bytes in every one-second interval (testdata/tshark/*.stats.txt, made by
// gen-stats.sh with tshark -z io,stat,1).
func TestStatsIOStatAsTshark(t *testing.T) {
	row := regexp.MustCompile(`(?m)^\|\s*(\d+)\s*<>\s*(?:\d+|Dur)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|$`)
	for _, base := range rpcCaptures {
		t.Run(base, func(t *testing.T) {
			rows := row.FindAllStringSubmatch(tsharkStats(t, base), -1)
			doc := runStatsJSON(t, capturePath(base), "io,stat,1")
			if len(rows) < 10 || len(rows) != len(doc.IO.Intervals) {
				t.Fatalf("tshark has %d intervals, rdmashark %d", len(rows), len(doc.IO.Intervals))
			}
			for i, r := range rows {
				iv := doc.IO.Intervals[i]
				if r[1] != strconv.Itoa(int(iv.StartS)) || r[2] != strconv.FormatUint(iv.Frames, 10) || r[3] != strconv.FormatUint(iv.Bytes, 10) {
					t.Errorf("interval %d: tshark %s frames %s bytes %s; rdmashark %g %d %d", i, r[1], r[2], r[3], iv.StartS, iv.Frames, iv.Bytes)
				}
			}
		})
	}
}

// TestStatsConvAsTshark: on the iWARP captures each connection of
// `stats -z conv` is the TCP conversation of tshark -z conv,tcp: frames
// each way and in all, bytes (tshark rounds to kB past 1000), relative
// start and duration.
func TestStatsConvAsTshark(t *testing.T) {
	row := regexp.MustCompile(`(?m)^(\S+)\s+<->\s+(\S+)\s+(\d+) (\d+) (bytes|kB)\s+(\d+) (\d+) (bytes|kB)\s+(\d+) (\d+) (bytes|kB)\s+([\d.]+)\s+([\d.]+)$`)
	bytesOK := func(n, unit string, ours uint64) bool {
		if unit == "kB" {
			return n == strconv.FormatUint(ours/1000, 10)
		}
		return n == strconv.FormatUint(ours, 10)
	}
	for _, base := range rpcCaptures {
		if !strings.HasPrefix(base, "siw") {
			continue
		}
		t.Run(base, func(t *testing.T) {
			byPair := map[string][]string{}
			for _, r := range row.FindAllStringSubmatch(tsharkStats(t, base), -1) {
				byPair[r[1]+" "+r[2]] = r
			}
			doc := runStatsJSON(t, capturePath(base), "conv")
			if len(doc.Conversations.Connections) < 2 {
				t.Fatalf("%d connections", len(doc.Conversations.Connections))
			}
			for _, c := range doc.Conversations.Connections {
				r := byPair[c.Client+" "+c.Server]
				if r == nil {
					t.Errorf("connection %d %s <-> %s: not in tshark's conv,tcp", c.ID, c.Client, c.Server)
					continue
				}
				toServer, toClient := c.QPs[0], c.QPs[1]
				// tshark: "<-" is B to A (server to client), "->" A to B.
				if r[3] != strconv.FormatUint(toClient.Packets, 10) || r[6] != strconv.FormatUint(toServer.Packets, 10) ||
					r[9] != strconv.FormatUint(c.Packets, 10) {
					t.Errorf("connection %d frames: tshark <- %s -> %s all %s; rdmashark %d %d %d", c.ID, r[3], r[6], r[9], toClient.Packets, toServer.Packets, c.Packets)
				}
				if !bytesOK(r[4], r[5], toClient.Bytes) || !bytesOK(r[7], r[8], toServer.Bytes) || !bytesOK(r[10], r[11], c.Bytes) {
					t.Errorf("connection %d bytes: tshark %s %s, %s %s, %s %s; rdmashark %d %d %d", c.ID, r[4], r[5], r[7], r[8], r[10], r[11], toClient.Bytes, toServer.Bytes, c.Bytes)
				}
				start, _ := strconv.ParseFloat(r[12], 64)
				dur, _ := strconv.ParseFloat(r[13], 64)
				if !near(start, c.StartS, 1e-6) || !near(dur, c.DurationS, 1e-4) {
					t.Errorf("connection %d: tshark start %s duration %s; rdmashark %f %f", c.ID, r[12], r[13], c.StartS, c.DurationS)
				}
			}
		})
	}
}

// tsharkSRT parses tshark's rpc,srt tables: program label ("NFS v3") and
// procedure name to calls, min, max, sum.
func tsharkSRT(text string) map[string][4]float64 {
	out := map[string][4]float64{}
	prog := ""
	filter := regexp.MustCompile(`^Filter: (nfs|nfsacl)\.procedure_v(\d)`)
	row := regexp.MustCompile(`^\s+\d+\s+(\S+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+\s+([\d.]+)$`)
	for _, l := range strings.Split(text, "\n") {
		if m := filter.FindStringSubmatch(l); m != nil {
			prog = strings.ToUpper(m[1]) + " v" + m[2]
			continue
		}
		if m := row.FindStringSubmatch(l); m != nil && prog != "" {
			var v [4]float64
			for i := range v {
				v[i], _ = strconv.ParseFloat(m[i+2], 64)
			}
			out[prog+" "+m[1]] = v
		}
	}
	return out
}

// TestStatsSRTAsTshark compares `stats -z rpc,srt` with tshark's rpc,srt
// (testdata/tshark/*.stats.txt) procedure by procedure: the same
// procedures, and the same calls, minimum, maximum and sum but where
// testdata/KNOWN-DIFFERENCES.md says why not: tshark's one pass counts
// every READ reply twice (KD-SRT-READ-TWICE: twice the calls and
// the sum, in NFSv4 COMPOUND's calls too), counts retransmitted Replies
// (KD-SRT-DUPLICATE-REPLY), and times a Call with a Read chunk from the
// frame that completed it (KD-SRT-READ-CHUNK).
func TestStatsSRTAsTshark(t *testing.T) {
	compared := 0
	for _, base := range rpcCaptures {
		t.Run(base, func(t *testing.T) {
			ts := tsharkSRT(tsharkStats(t, base))
			doc := runStatsJSON(t, capturePath(base), "rpc,srt")
			ours := map[string]report.SRTRow{}
			for _, r := range doc.SRT.Procedures {
				if r.ULP == "rpcordma" {
					ours[r.Program+" "+r.Name] = r
				}
			}
			for k, v := range ts {
				r, ok := ours[k]
				if !ok {
					t.Errorf("%s: tshark %v calls, rdmashark none", k, v[0])
					continue
				}
				calls := float64(r.Count)
				switch name := k[strings.LastIndexByte(k, ' ')+1:]; name {
				case "READ":
					if v[0] != 2*calls || !near(v[3], 2*r.Sum, 1e-5) || !near(v[1], r.Min, 1e-6) || !near(v[2], r.Max, 1e-6) {
						t.Errorf("%s: tshark %v, rdmashark twice %d calls, sum %f (min %f max %f)", k, v, r.Count, 2*r.Sum, r.Min, r.Max)
					}
				case "COMPOUND", "GETATTR":
					if v[0] < calls || v[0] > 2*calls {
						t.Errorf("%s: tshark %v calls, rdmashark %d", k, v[0], r.Count)
					}
					// A COMPOUND may WRITE: tshark times it from the
					// frame that completed the Call (KD-SRT-READ-CHUNK).
					if name == "COMPOUND" && v[1] > r.Min+1e-6 || name == "GETATTR" && !near(v[1], r.Min, 1e-6) {
						t.Errorf("%s: tshark min %f, rdmashark %f", k, v[1], r.Min)
					}
				case "WRITE", "SYMLINK":
					if v[0] != calls {
						t.Errorf("%s: tshark %v calls, rdmashark %d", k, v[0], r.Count)
					}
				default:
					if v[0] != calls || !near(v[1], r.Min, 1e-6) || !near(v[2], r.Max, 1e-6) || !near(v[3], r.Sum, 1e-6*calls+1e-6) {
						t.Errorf("%s: tshark %v; rdmashark %d %f %f %f", k, v, r.Count, r.Min, r.Max, r.Sum)
					}
				}
				compared++
				delete(ours, k)
			}
			for k, r := range ours {
				t.Errorf("%s: rdmashark %d calls, tshark none", k, r.Count)
			}
		})
	}
	if compared < 30 {
		t.Errorf("only %d procedures compared", compared)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "testdata", "KNOWN-DIFFERENCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"KD-SRT-READ-TWICE", "KD-SRT-DUPLICATE-REPLY", "KD-SRT-READ-CHUNK"} {
		if !regexp.MustCompile(`(?m)^#+ ` + id + `\b`).Match(doc) {
			t.Errorf("%s is not documented in testdata/KNOWN-DIFFERENCES.md", id)
		}
	}
}

// TestStatsSRTExact computes each request name's figures independently,
// from the exchanges `exchanges --format json` lists (latency_ns of the
// responded ones), and requires srt's count, min, max and sum to be equal
// and its p50 and p99 to be within the documented 1/32 of the exact
// nearest-rank percentile.
func TestStatsSRTExact(t *testing.T) {
	for _, base := range []string{"rxe-nfs3", "siw-nfs41", "rxe-nfs42-small", "ulp/rxe-nvmeof-mix-small", "ulp/siw-smbdirect"} {
		t.Run(base, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run([]string{"exchanges", "--format", "json", capturePath(base)}, nil, &out, &errOut); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			var ex struct {
				Exchanges []struct {
					ULP       string `json:"ulp"`
					Name      string `json:"name"`
					Outcome   string `json:"outcome"`
					LatencyNS *int64 `json:"latency_ns"`
				} `json:"exchanges"`
			}
			if err := json.Unmarshal(out.Bytes(), &ex); err != nil {
				t.Fatal(err)
			}
			lat := map[string][]int64{}
			for _, x := range ex.Exchanges {
				if x.Outcome == "responded" && x.LatencyNS != nil {
					lat[x.ULP+" "+x.Name] = append(lat[x.ULP+" "+x.Name], *x.LatencyNS)
				}
			}
			doc := runStatsJSON(t, capturePath(base), "srt")
			byName := map[string][]report.SRTRow{}
			for _, r := range doc.SRT.Procedures {
				byName[r.ULP+" "+r.Name] = append(byName[r.ULP+" "+r.Name], r)
			}
			checked := 0
			for k, l := range lat {
				sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
				rows := byName[k]
				var n uint64
				var sum float64
				mn, mx := math.Inf(1), math.Inf(-1)
				for _, r := range rows {
					n += r.Count
					sum += r.Sum
					mn, mx = math.Min(mn, r.Min), math.Max(mx, r.Max)
				}
				var exactSum float64
				for _, v := range l {
					exactSum += float64(v) / 1e9
				}
				if n != uint64(len(l)) || !near(mn, float64(l[0])/1e9, 1e-9) || !near(mx, float64(l[len(l)-1])/1e9, 1e-9) || !near(sum, exactSum, 1e-6) {
					t.Errorf("%s: %d exchanges min %d max %d sum %f; srt %d %f %f %f", k, len(l), l[0], l[len(l)-1], exactSum, n, mn, mx, sum)
				}
				if len(rows) != 1 {
					continue // one name under several programs (NULL): percentiles per program
				}
				for _, pc := range []struct {
					p   float64
					got float64
				}{{50, rows[0].P50}, {99, rows[0].P99}} {
					rank := int(math.Ceil(pc.p / 100 * float64(len(l))))
					exact := float64(l[rank-1]) / 1e9
					if !near(pc.got, exact, exact/32+1e-9) {
						t.Errorf("%s p%g: %f, exact %f", k, pc.p, pc.got, exact)
					}
				}
				checked++
			}
			if checked < 2 {
				t.Errorf("only %d names checked", checked)
			}
		})
	}
}

// TestStatsExpertAsCheck: `stats -z expert` counts, by severity and rule,
// the findings `check --format json` lists.
func TestStatsExpertAsCheck(t *testing.T) {
	for _, base := range []string{"rxe-nfs3", "siw-nfs3"} {
		t.Run(base, func(t *testing.T) {
			var out, errOut bytes.Buffer
			run([]string{"check", "--format", "json", capturePath(base)}, nil, &out, &errOut)
			var doc struct {
				Files []struct {
					Findings []struct {
						Rule     string `json:"rule"`
						Severity string `json:"severity"`
					} `json:"findings"`
				} `json:"files"`
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Files) != 1 {
				t.Fatalf("check JSON: %v (%d files)", err, len(doc.Files))
			}
			want := map[string]int{}
			for _, f := range doc.Files[0].Findings {
				want[f.Severity+" "+f.Rule]++
			}
			st := runStatsJSON(t, capturePath(base), "expert")
			got := map[string]int{}
			for sev, rows := range map[string][]report.ExpertRule{"error": st.Expert.Errors, "warning": st.Expert.Warnings, "info": st.Expert.Infos} {
				for _, r := range rows {
					got[sev+" "+r.Rule] += r.Count
				}
			}
			if len(want) == 0 {
				t.Fatal("check found nothing to compare")
			}
			for k, n := range want {
				if got[k] != n {
					t.Errorf("%s: check %d, stats %d", k, n, got[k])
				}
			}
			for k, n := range got {
				if want[k] == 0 {
					t.Errorf("%s: stats %d, check none", k, n)
				}
			}
		})
	}
}

// TestStatsTextFits: the text tables of every statistic fit in 100
// columns on the NFS captures, and name each table.
func TestStatsTextFits(t *testing.T) {
	for _, base := range []string{"rxe-nfs3", "siw-nfs41"} {
		var out, errOut bytes.Buffer
		if code := run([]string{"stats", capturePath(base)}, nil, &out, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s", base, code, errOut.String())
		}
		for i, l := range strings.Split(out.String(), "\n") {
			if n := len([]rune(l)); n > 100 {
				t.Errorf("%s line %d: %d columns: %s", base, i+1, n, l)
			}
		}
		for _, title := range []string{"RDMA Conversations (conv)", "IO Statistics (io,stat)", "Expert (findings of check", "Service Response Time (srt)"} {
			if !strings.Contains(out.String(), title) {
				t.Errorf("%s: no %q", base, title)
			}
		}
	}
}

// TestStatsSpecs: tshark's -z words are taken, others refused with exit 2.
func TestStatsSpecs(t *testing.T) {
	for _, z := range []string{"conv", "conv,rdma", "io,stat,0.5", "io,stat", "expert", "srt", "rpc,srt,100003,3", "nvme,srt"} {
		if _, err := parseStatsSpecs([]string{z}); err != nil {
			t.Errorf("-z %s: %v", z, err)
		}
	}
	for _, z := range []string{"bogus", "io,stat,-1", "io,stat,x", "rpc,programs"} {
		var out, errOut bytes.Buffer
		if code := run([]string{"stats", "-z", z, capturePath("rxe-nfs3")}, nil, &out, &errOut); code != 2 {
			t.Errorf("-z %s: exit %d, want 2 (%s)", z, code, errOut.String())
		}
	}
}

// TestStatsSRTOperationsAsTshark: srt's NFSv4 rows by main operation
// count, per operation, the COMPOUND Calls whose first nfs.main_opcode
// tshark shows on the Call's frame (testdata/tshark/*.nfs-calls.tsv for
// the Calls, *.nfs.tsv for nfs.main_opcode); every Call of these captures
// is answered.
func TestStatsSRTOperationsAsTshark(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "tshark")
	fields := listFile(t, filepath.Join(dir, "fields-nfs.txt"))
	mainCol := -1
	for i, f := range fields {
		if f == "nfs.main_opcode" {
			mainCol = i
		}
	}
	total := 0
	for _, base := range []string{"rxe-nfs41", "rxe-nfs42-small", "siw-nfs41", "siw-nfs42-small"} {
		t.Run(base, func(t *testing.T) {
			calls, err := os.ReadFile(filepath.Join(dir, base+".nfs-calls.tsv"))
			if err != nil {
				t.Fatal(err)
			}
			rows, err := os.ReadFile(filepath.Join(dir, base+".nfs.tsv"))
			if err != nil {
				t.Fatal(err)
			}
			mainOf := map[string]string{}
			for _, l := range readLines(t, rows) {
				v := strings.Split(l, "\t")
				mainOf[v[0]] = strings.Split(v[mainCol], ",")[0]
			}
			want := map[string]uint64{}
			for _, l := range readLines(t, calls) {
				v := strings.Split(l, "\t")
				if v[3] != "COMPOUND" {
					continue
				}
				c, err := strconv.Atoi(mainOf[v[0]])
				if err != nil {
					t.Fatalf("frame %s: main opcode %q", v[0], mainOf[v[0]])
				}
				want[nfs.Opnum4(c).String()]++
			}
			doc := runStatsJSON(t, capturePath(base), "srt")
			got := map[string]uint64{}
			for _, r := range doc.SRT.Operations {
				got[r.Name] += r.Count
			}
			for op, n := range want {
				if got[op] != n {
					t.Errorf("%s: tshark %d COMPOUNDs, srt %d", op, n, got[op])
				}
				total += int(n)
			}
			for op, n := range got {
				if want[op] == 0 {
					t.Errorf("%s: srt %d, tshark none", op, n)
				}
			}
		})
	}
	if total < 300 {
		t.Errorf("only %d COMPOUNDs compared", total)
	}
}
