package report

import (
	"context"
	"flag"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

var screenshots = flag.String("screenshots", "", "also keep the Chromium screenshots of the golden report.html in this directory")

// TestHTMLInChromium looks at the golden report.html as a reader would: it
// renders it in headless Chromium at desktop and phone width and checks
// that the tables (header shading, verdict colours) and the charts (the
// fills of the first contender's bars) are on the screen.
func TestHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: Chromium takes tens of seconds on a busy machine")
	}
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no chromium on PATH (apt-get install -y chromium): report.html not looked at")
	}
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
		{"desktop", 1100, 11000},
		{"phone", 390, 16000},
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
				color.RGBA{0xe3, 0xf4, 0xe3, 0xff}, // "holds" verdict cell
				palette[0],                         // monolock's bars in the charts
			)
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
