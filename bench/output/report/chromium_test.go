package report

import (
	"context"
	"encoding/json"
	"flag"
	stdhtml "html"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var screenshots = flag.String("screenshots", "", "also keep the Chromium screenshots of the golden report.html in this directory")

// findChromium returns the headless browser; without one the test is
// skipped, except in CI (CI set), where .ci/run installs it and its
// absence is a failure.
func findChromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: Chromium takes tens of seconds on a busy machine")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("CI: no chromium on PATH; .ci/run installs Debian's chromium")
	}
	t.Skip("no chromium on PATH (apt-get install -y chromium): report.html not looked at")
	return ""
}

// overflowScript measures, in the browser, every table container, table,
// chart and chart label of the page and writes what sticks out (past the
// page's width, past its scroll container, or past its chart by more than
// the few pixels of a fallback font's line box) into the
// DOM as one line "OVERFLOW: [...]".
const overflowScript = `<script>
(function () {
  var out = [], vw = document.documentElement.clientWidth;
  function name(e) { var t = e.closest("figure") || e.closest("div.scroll") || e; return (t.id || (t.querySelector("th") || t).textContent).slice(0, 60); }
  if (document.documentElement.scrollWidth > vw) out.push("page scrolls sideways: " + document.documentElement.scrollWidth + " > " + vw);
  // on a phone a wide table scrolls inside its container (its contender
  // column fixed); on a desktop every column must be visible
  if (vw >= 1000) document.querySelectorAll("div.scroll").forEach(function (d) {
    if (d.scrollWidth > d.clientWidth + 1) out.push("table " + name(d) + ": " + d.scrollWidth + " px in a " + d.clientWidth + " px container");
  });
  // on a phone a chart keeps a legible size and scrolls inside its figure
  document.querySelectorAll(vw >= 1000 ? "table, figure svg" : "figure").forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.left < -1 || r.right > vw + 1) out.push(e.tagName + " " + name(e) + ": spans " + Math.round(r.left) + ".." + Math.round(r.right) + " of " + vw);
  });
  document.querySelectorAll("figure svg").forEach(function (svg) {
    var s = svg.getBoundingClientRect();
    svg.querySelectorAll("text").forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.width > 0 && (r.left < s.left - 4 || r.right > s.right + 4 || r.top < s.top - 4 || r.bottom > s.bottom + 4)) out.push("chart " + name(svg) + ": label " + JSON.stringify(t.textContent) + " outside the chart");
    });
    // no two labels of a chart overlap (by more than a pixel of their
    // line boxes)
    var boxes = [];
    svg.querySelectorAll("text").forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.width > 0 && t.textContent.trim() !== "") boxes.push({t: t.textContent, r: r});
    });
    for (var i = 0; i < boxes.length; i++) for (var j = i + 1; j < boxes.length; j++) {
      var a = boxes[i].r, b = boxes[j].r;
      var w = Math.min(a.right, b.right) - Math.max(a.left, b.left), h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 1 && h > 0.35 * Math.min(a.height, b.height)) out.push("chart " + name(svg) + ": labels " + JSON.stringify(boxes[i].t) + " and " + JSON.stringify(boxes[j].t) + " overlap");
    }
  });
  // on a phone the contender column stays while a wide table scrolls
  if (vw < 1000) {
    var wide = Array.prototype.filter.call(document.querySelectorAll("div.scroll"), function (d) { return d.scrollWidth > d.clientWidth + 1 && !d.querySelector("table.cards"); });
    if (wide.length === 0) out.push("no table scrolls at this width: the fixed contender column is not checked");
    wide.forEach(function (d) {
      var td = d.querySelector("tbody tr:not(.group) td");
      if (!td) return;
      var before = td.getBoundingClientRect().left;
      d.scrollLeft = 120;
      if (Math.abs(td.getBoundingClientRect().left - before) > 1) out.push("table " + name(d) + ": the contender column scrolls away");
      d.scrollLeft = 0;
    });
  }
  var text = "OVER" + "FLOW: " + JSON.stringify({width: vw, problems: out});
  if (window.parent !== window) { window.parent.postMessage(text, "*"); return; }
  var pre = document.createElement("pre");
  pre.textContent = text;
  document.body.appendChild(pre);
})();
</script>`

// TestHTMLFits renders report.html in headless Chromium 1280 px and 390
// px (a phone) wide and fails when the page scrolls sideways, a chart or
// a label sticks out, two labels of a chart overlap, or (at 1280 px) a
// table needs its scroll bar: every column must be visible on a desktop.
// On the phone a table scrolls in its container with the contender
// column fixed, and a chart keeps a legible size and scrolls in its
// figure. It looks at two reports: the golden one (eleven contenders),
// and the full reference run's (seventeen contenders, a failed handover
// trial drawn as a capped bar, the failover, scale, chaos and workload
// charts).
func TestHTMLFits(t *testing.T) {
	browser := findChromium(t)
	golden, err := os.ReadFile(filepath.Join("testdata", "golden", HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	full, err := Render(loadFullRun(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range []struct {
		name string
		html []byte
	}{{"golden", golden}, {"full-run", full.HTML}} {
		t.Run(page.name, func(t *testing.T) { checkFits(t, browser, page.html) })
	}
}

// checkFits measures one report.html at 1280 and 390 px (see
// TestHTMLFits).
func checkFits(t *testing.T, browser string, html []byte) {
	page := filepath.Join(t.TempDir(), "measured.html")
	measured := strings.Replace(string(html), "</body>", overflowScript+"\n</body>", 1)
	if err := os.WriteFile(page, []byte(measured), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1280, 390} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			// headless Chromium keeps a window at least 500 px wide: the
			// page is measured in a frame of the width asked for
			frame := filepath.Join(t.TempDir(), "frame.html")
			wrapper := `<!DOCTYPE html><html><body style="margin:0"><pre id="out"></pre>` +
				`<script>window.addEventListener("message", function (e) { document.getElementById("out").textContent = e.data; });</script>` +
				`<iframe src="file://` + page + `" style="width:` + strconv.Itoa(width) + `px;height:900px;border:0"></iframe></body></html>`
			if err := os.WriteFile(frame, []byte(wrapper), 0o644); err != nil {
				t.Fatal(err)
			}
			got := measure(t, browser, frame, 1280)
			if got.Width < width-80 || got.Width > width {
				t.Fatalf("measured at %d px, want %d (less a scrollbar)", got.Width, width)
			}
			for _, p := range got.Problems {
				t.Error(p)
			}
		})
	}
}

// measure loads page in Chromium width px wide and returns what the
// measuring script wrote.
func measure(t *testing.T, browser, page string, width int) (got struct {
	Width    int
	Problems []string
}) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--allow-file-access-from-files", "--window-size="+strconv.Itoa(width)+",900", "--virtual-time-budget=10000", "--dump-dom", "file://"+page)
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", browser, err)
	}
	_, line, ok := strings.Cut(string(dom), "OVERFLOW: ")
	if !ok {
		t.Fatalf("the measuring script wrote nothing; dom:\n%.2000s", dom)
	}
	line, _, _ = strings.Cut(line, "\n")
	line, _, _ = strings.Cut(line, "</pre>")
	if err := json.Unmarshal([]byte(stdhtml.UnescapeString(line)), &got); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return got
}

// TestHTMLInChromium looks at the golden report.html as a reader would: it
// renders it in headless Chromium at desktop and phone width and checks
// that the tables (header shading, verdict colours) and the charts (the
// fills of the first contender's bars) are on the screen.
func TestHTMLInChromium(t *testing.T) {
	browser := findChromium(t)
	page, err := filepath.Abs(filepath.Join("testdata", "golden", HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	out := *screenshots
	if out == "" {
		out = t.TempDir()
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, size := range []struct {
		name          string
		width, height int
	}{
		{"desktop", 1280, 16000},
		{"phone", 390, 30000},
	} {
		t.Run(size.name, func(t *testing.T) {
			shot := filepath.Join(out, "report-"+size.name+".png")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
				"--user-data-dir="+t.TempDir(), "--screenshot="+shot,
				"--window-size="+strconv.Itoa(size.width)+","+strconv.Itoa(size.height), "file://"+page)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", browser, err, msg)
			}
			f, err := os.Open(shot)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			img, err := png.Decode(f)
			if err != nil {
				t.Fatal(err)
			}
			counts := countColours(img,
				color.RGBA{0xf2, 0xf2, 0xf2, 0xff}, // table header
				color.RGBA{0xfb, 0xe2, 0xe2, 0xff}, // "fails" verdict cell
				palette[0],                         // monolock's bars in the charts
				color.RGBA{0xf4, 0xf0, 0xdc, 0xff}, // "inconclusive" verdict cell
			)
			counts[1] += counts[3] // the open claims: fails or inconclusive
			for i, what := range []string{"table headers", "verdict cells", "chart bars"} {
				if counts[i] < 200 {
					t.Errorf("%s: %d pixels of %s, the page does not show them", size.name, counts[i], what)
				}
			}
		})
	}
}

// countColours counts the pixels of img exactly equal to each colour.
func countColours(img image.Image, colours ...color.RGBA) []int {
	counts := make([]int, len(colours))
	var pix []uint8
	switch m := img.(type) {
	case *image.RGBA:
		pix = m.Pix
	case *image.NRGBA:
		pix = m.Pix
	default:
		b := img.Bounds()
		rgba := image.NewRGBA(b)
		draw.Draw(rgba, b, img, b.Min, draw.Src)
		pix = rgba.Pix
	}
	for i := 0; i+3 < len(pix); i += 4 {
		for j, c := range colours {
			if pix[i] == c.R && pix[i+1] == c.G && pix[i+2] == c.B {
				counts[j]++
			}
		}
	}
	return counts
}
