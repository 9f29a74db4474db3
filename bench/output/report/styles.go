package report

import (
	"image/color"
	"slices"
	"strconv"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// palette gives every lock without a colour of its own a fixed colour by
// its position among the locks; floors are grey and dashed so they read as
// baselines.
var palette = []color.RGBA{
	{0x1f, 0x5f, 0xbf, 0xff}, // blue
	{0xc8, 0x32, 0x2d, 0xff}, // red
	{0xe0, 0x8a, 0x00, 0xff}, // orange
	{0x2e, 0x8b, 0x57, 0xff}, // green
	{0x7b, 0x3f, 0xa0, 0xff}, // purple
	{0x8c, 0x56, 0x3c, 0xff}, // brown
	{0x17, 0xa2, 0xb8, 0xff}, // teal
	{0xd6, 0x33, 0x84, 0xff}, // pink
	{0x6b, 0x8e, 0x23, 0xff}, // olive
	{0x1a, 0x2b, 0x6d, 0xff}, // navy
}

var (
	floorGrey   = [...]color.RGBA{{0x55, 0x55, 0x55, 0xff}, {0x99, 0x99, 0x99, 0xff}}
	floorDashes = [...][]vg.Length{{vg.Points(5), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(6), vg.Points(2), vg.Points(2), vg.Points(2)}}
)

// lineStyle returns the colour and dashes of a contender's line: its own
// colour (ContenderInfo.Colour), else the next palette colour no other
// contender has taken, dashed for floors.
func (f *figures) lineStyle(contender string) draw.LineStyle {
	ls := draw.LineStyle{Width: vg.Points(1.5)}
	if f.isFloor(contender) {
		floor := 0
		for _, c := range f.contenders {
			if c == contender {
				break
			}
			if f.isFloor(c) {
				floor++
			}
		}
		ls.Color, ls.Dashes = floorGrey[floor%len(floorGrey)], floorDashes[floor%len(floorDashes)]
	}
	if c, ok := f.colours()[contender]; ok {
		ls.Color = c
	}
	if k := f.familyIndex(contender); !f.isFloor(contender) && k > 0 {
		// members of one family share a hue (monolock, monolock-warm,
		// monolock-tfo): the second and later are told apart by dashes
		ls.Dashes = memberDashes[(k-1)%len(memberDashes)]
	}
	return ls
}

// memberDashes are the dash patterns of a family's second and later
// members, unlike the floors' patterns.
var memberDashes = [...][]vg.Length{{vg.Points(8), vg.Points(2)}, {vg.Points(1), vg.Points(1.5)}, {vg.Points(8), vg.Points(2), vg.Points(1), vg.Points(2)}}

// glyphShapes are the point markers, one per lock by its position, so that
// two locks of a similar colour still differ at every point.
var glyphShapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.PlusGlyph{},
}

// glyphStyle returns the point marker of a contender: its line's colour
// and a shape of its own among the contenders of the report.
func (f *figures) glyphStyle(contender string) draw.GlyphStyle {
	i := max(slices.Index(f.contenders, contender), 0)
	return draw.GlyphStyle{Color: f.lineStyle(contender).Color, Radius: vg.Points(3), Shape: glyphShapes[i%len(glyphShapes)]}
}

// familyIndex is a contender's position among the contenders of its
// family, in display order.
func (f *figures) familyIndex(contender string) int {
	k := 0
	for _, c := range f.contenders {
		if c == contender {
			return k
		}
		if f.family(c) == f.family(contender) {
			k++
		}
	}
	return 0
}

// colours assigns the chart colour of every lock and of every floor with
// a colour of its own.
func (f *figures) colours() map[string]color.RGBA {
	out := map[string]color.RGBA{}
	taken := map[color.RGBA]bool{}
	for _, c := range f.contenders {
		if col, ok := parseColour(f.info[c].Colour); ok {
			out[c], taken[col] = col, true
		}
	}
	next := 0
	for _, c := range f.contenders {
		if _, ok := out[c]; ok || f.isFloor(c) {
			continue
		}
		for i := range palette { // the first free colour, or any once all are taken
			if col := palette[(next+i)%len(palette)]; !taken[col] || i == len(palette)-1 {
				out[c], taken[col], next = col, true, (next+i+1)%len(palette)
				break
			}
		}
	}
	return out
}

// parseColour reads "#rrggbb".
func parseColour(s string) (color.RGBA, bool) {
	if len(s) != 7 || s[0] != '#' {
		return color.RGBA{}, false
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return color.RGBA{}, false
	}
	return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xff}, true
}
