package operator

import "testing"

func TestShapeKnown(t *testing.T) {
	cases := map[string]bool{
		// Accepted and rejected examples stated in the grammar's prose.
		"check change verify record":                                     true,
		"change change verify verify record":                             true, // repeats collapse
		"check verify check":                                             true, // inquiry
		"change verify change verify change verify change verify record": true, // the 4-cycle the old bound refused
		"change verify record act verify act verify act verify":          true, // 3 acts
		"change record":                                                  false,
		"change verify record act":                                       false,
		"record":                                                         false,
		"":                                                               false,
		"check change verify record act":                                 false,
	}
	for in, want := range cases {
		if got := ShapeKnown(in); got != want {
			t.Errorf("ShapeKnown(%q) = %v, want %v", in, got, want)
		}
	}
}
