"""Target `platform`: the model registry between the tiers and the promotion config."""
