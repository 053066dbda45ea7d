"""The lab's power bill: every source's energy from the store, priced by [energy]."""
