function InterpretStatu(obj)
  return {status = "Running"}
end
