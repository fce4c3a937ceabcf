package gce

var (
	instancePrices = map[string]float64{
		"e2-standard-8":               0.26805,
		"n2-standard-8":               0.3885,
	}
	preemptiblePrices = map[string]float64{
		"e2-standard-8":               0.08041,
	}
)
