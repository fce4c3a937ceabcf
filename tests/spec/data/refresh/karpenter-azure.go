package pricing

// generated at 2026-06-18T03:43:41Z

var initialOnDemandPrices = map[string]map[string]float64{}

func init() {
	// eastus
	initialOnDemandPrices["eastus"] = map[string]float64{
		"Standard_D8s_v5":         0.384000,
		"Standard_NV72ads_A10_v5": 6.520000,
	}
	// westeurope
	initialOnDemandPrices["westeurope"] = map[string]float64{
		"Standard_D8s_v5": 0.424000,
	}
}
