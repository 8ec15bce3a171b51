`default_nettype none
// tt_mac_array: LANES multiply-accumulate lanes, the datapath of the contraction engine.
//
// On a cycle with en high, every lane l does
//   acc[l] <= (clear ? 0 : acc[l]) + a[l] * b[l]   (signed, exact; the engine gives every lane one a word but in a
//                                                   lane sum, where each lane has its own)
// clear starts a new dot product (its first product is loaded, not added). A product reaches the
// accumulators 1 + IN_REG + PROD_REG cycles after its en edge (the latency); they hold while no product arrives.
// rst drops a product in flight. The accumulators are not reset (they are undefined until the first clear): every
// dot product starts with clear, and a reset of LANES x ACC_W flip-flops is the largest net of a wide engine.
//
// One multiply and one add per lane. PROD_REG = 1 puts a register between them (the multiplier's output
// register in a DSP slice: SB_MAC16, DSP48E2, ECP5 MULT18X18D), so the multiply and the wide accumulate each
// get a cycle; PROD_REG = 0 feeds the product to the accumulator directly (fewer flip-flops, slower clock).
// IN_REG = 1 registers the operands ahead of the multiply (a DSP's input registers): the operands come from
// block RAMs (the lane buffers) and a bank's read port fanned out to every lane, which a placer cannot put
// beside all the multipliers, so the long route gets a cycle of its own (on ECP5 that route is most of a clock period).
// The accumulator never wraps in a legal program (SPEC 1.2: the compiler bounds every reduction).
module tt_mac_array #(
  parameter integer LANES = 1,   // MAC lanes, >= 1
  parameter integer A_W   = 16,  // a operand width, 2..32
  parameter integer B_W   = 16,  // per-lane operand width, 2..32
  parameter integer ACC_W = 48,  // accumulator width, A_W + B_W < ACC_W <= 64
  parameter integer PROD_REG = 1, // product register between the multiply and the accumulate, 0 or 1
  parameter integer IN_REG   = 0, // operand registers ahead of the multiply, 0 or 1
  parameter [63:0] TECH     = "generic"  // the multipliers' technology (rtl/prim/tt_prim_mul.v)
) (
  input  wire                   clk,
  input  wire                   rst,
  input  wire                   en,     // accumulate this cycle
  input  wire                   clear,  // with en: start a new dot product
  input  wire [A_W*LANES-1:0]   a,      // lane l in [A_W*l +: A_W], signed
  input  wire [B_W*LANES-1:0]   b,      // lane l in [B_W*l +: B_W], signed
  output wire [ACC_W*LANES-1:0] acc     // lane l in [ACC_W*l +: ACC_W], signed
);

  localparam integer PROD_W = A_W + B_W;

  // Elaboration-time parameter checks (a missing module stops both Icarus 11 and Verilator).
  generate
    if (LANES < 1) begin : g_bad_lanes
      error_tt_mac_array_LANES_must_be_at_least_1 u_error ();
    end
    if (A_W < 2 || A_W > 32) begin : g_bad_a_w
      error_tt_mac_array_A_W_must_be_2_to_32 u_error ();
    end
    if (B_W < 2 || B_W > 32) begin : g_bad_b_w
      error_tt_mac_array_B_W_must_be_2_to_32 u_error ();
    end
    // At least one bit of headroom above a product, so a clear + one product can never wrap.
    if (ACC_W <= A_W + B_W || ACC_W > 64) begin : g_bad_acc_w
      error_tt_mac_array_ACC_W_must_exceed_A_W_plus_B_W_and_be_at_most_64 u_error ();
    end
    if (PROD_REG < 0 || PROD_REG > 1) begin : g_bad_prod_reg
      error_tt_mac_array_PROD_REG_must_be_0_or_1 u_error ();
    end
    if (IN_REG < 0 || IN_REG > 1) begin : g_bad_in_reg
      error_tt_mac_array_IN_REG_must_be_0_or_1 u_error ();
    end
  endgenerate

  // The accumulate stage's controls: en and clear, delayed with their product through the operand and product
  // registers (CTRL_LAT cycles). Each group of GROUP_LANES lanes has its own copy of the delay: one enable net to
  // every accumulator of a wide engine spans the whole device. The copies' processes are (* keep *), or yosys
  // merges their identical flip-flops back into one.
  localparam integer CTRL_LAT    = IN_REG + PROD_REG;
  localparam integer GROUP_LANES = 8;
  localparam integer NGROUPS     = (LANES + GROUP_LANES - 1) / GROUP_LANES;
  wire [NGROUPS-1:0] acc_en;
  wire [NGROUPS-1:0] acc_clear;
  genvar g;
  generate
    if (CTRL_LAT > 0) begin : g_ctrl_reg
      for (g = 0; g < NGROUPS; g = g + 1) begin : g_copy
        reg [CTRL_LAT-1:0] en_q;  // stage k: en of k + 1 cycles ago
        reg [CTRL_LAT-1:0] clear_q;
        integer k;
        (* keep *)
        always @(posedge clk) begin
          if (rst) begin
            en_q    <= {CTRL_LAT{1'b0}};
            clear_q <= {CTRL_LAT{1'b0}};
          end else begin
            en_q[0]    <= en;
            clear_q[0] <= clear;
            for (k = 1; k < CTRL_LAT; k = k + 1) begin
              en_q[k]    <= en_q[k - 1];
              clear_q[k] <= clear_q[k - 1];
            end
          end
        end
        assign acc_en[g]    = en_q[CTRL_LAT-1];
        assign acc_clear[g] = clear_q[CTRL_LAT-1];
      end
    end else begin : g_ctrl_direct
      assign acc_en    = {NGROUPS{en}};
      assign acc_clear = {NGROUPS{clear}};
    end
  endgenerate

  genvar l;
  generate
    for (l = 0; l < LANES; l = l + 1) begin : g_lane
      // The multiply with its operand and product registers (no reset: acc_en is low after rst until a product of
      // new operands arrives), in the technology's multiplier: a DSP's own registers.
      wire [PROD_W-1:0] prod_u;
      tt_prim_mul #(
        .A_W     (A_W),
        .B_W     (B_W),
        .IN_REG  (IN_REG),
        .OUT_REG (PROD_REG),
        .TECH    (TECH)
      ) u_mul (
        .clk (clk),
        .a   (a[A_W*l +: A_W]),
        .b   (b[B_W*l +: B_W]),
        .p   (prod_u)
      );
      wire signed [PROD_W-1:0] prod = $signed(prod_u);

      reg  signed [ACC_W-1:0]  acc_q;
      wire                     lane_en    = acc_en[l / GROUP_LANES];
      wire                     lane_clear = acc_clear[l / GROUP_LANES];
      wire signed [ACC_W-1:0]  base = lane_clear ? {ACC_W{1'b0}} : acc_q;
      wire signed [ACC_W-1:0]  acc_d = base + {{(ACC_W-PROD_W){prod[PROD_W-1]}}, prod};

      always @(posedge clk) begin
        if (lane_en) begin
          acc_q <= acc_d;
        end
      end

      assign acc[ACC_W*l +: ACC_W] = acc_q;
    end
  endgenerate

endmodule
`default_nettype wire
