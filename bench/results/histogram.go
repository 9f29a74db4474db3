package results

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// NewHistogram encodes h as a snapshot named name whose values are in unit.
func NewHistogram(name, unit string, h *hdrhistogram.Histogram) (Histogram, error) {
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return Histogram{}, fmt.Errorf("results: encoding histogram %q: %w", name, err)
	}
	return Histogram{Name: name, Unit: unit, Count: h.TotalCount(), Encoded: string(enc)}, nil
}

// Decode returns the histogram the snapshot holds.
func (h Histogram) Decode() (*hdrhistogram.Histogram, error) {
	d, err := hdrhistogram.Decode([]byte(h.Encoded))
	if err != nil {
		return nil, fmt.Errorf("results: decoding histogram %q: %w", h.Name, err)
	}
	return d, nil
}
