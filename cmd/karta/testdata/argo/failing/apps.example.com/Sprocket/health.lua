-- A script without a health_test.yaml beside it.
return {status = "Healthy", message = "Always"}
