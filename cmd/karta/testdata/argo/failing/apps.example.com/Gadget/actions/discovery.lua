-- Offers an action its test does not expect.
return {spin = {}, ["self-destruct"] = {["disabled"] = true}}
