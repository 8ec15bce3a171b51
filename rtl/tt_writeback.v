`default_nettype none
// tt_writeback: the last stage shared by the contraction engine and the element-wise unit (SPEC 2.3, 5.1).
//
// Per requantised element: clamp to rq_w bits (the op's output width out_w <= OUT_W, except the Adam step's delta),
// optionally negate it (the Adam step subtracts its delta), optionally add the old word and saturate to out_w (the
// saturating accumulate of gradient buffers), register the write, count saturations (the first clamp and the
// requantiser's only with rq_count)
// (32-bit, saturating; an element that clamps twice counts twice, as in the golden model) and track max |y|.
// clear restarts the statistics for a new op. The unit hands over each element's address and final flag
// TAG_DELAY cycles before its requantised value and the old destination word as it comes from the memory,
// OLD_DELAY cycles before; tt_writeback delays them to meet the value. Latency: two cycles from in_valid to
// wr_en (the first clamp is registered before the accumulate, and the out_w limits come from registers, so
// neither the requantiser's output nor the descriptor field reaches the write data in one cycle), five to the
// statistics (|y| is formed from the registered write word and registered, then its max is taken in two stages:
// neither the negation nor the compares sit on the write path). fin pulses the cycle after the last write, and the
// units raise done in the next; the statistics are complete at the end of done's cycle, so a reader takes them
// from the cycle after done (the sequencer does, in its STAT state). out_w must be stable from the op's start, at
// least two cycles before its first element.
// LANES > 1 (the contraction engine's wide drain): with `wide` high an arrival is a run of LANES elements (lane l's
// in [OUT_W*l +: OUT_W] of rq_y, old_data and wr_data) for the LANES consecutive words from tag_addr, written at
// once (wr_wide), their saturations summed and their max |y| taken; with wide low only lane 0 carries an element.
module tt_writeback #(
  parameter integer ADDR_W    = 20,  // element address width
  parameter integer OUT_W     = 16,  // widest output word, 2..32
  parameter integer TAG_DELAY = 3,   // cycles from the element's tags (tag_addr, tag_fin) to its rq_y, >= 1
  parameter integer OLD_DELAY = 4,   // cycles from the old word on old_data to the element's rq_y, >= 1
  parameter integer LANES     = 1    // elements an arrival may carry (a wide write), 1..16
) (
  input  wire              clk,
  input  wire              rst,
  input  wire              clear,       // a new op starts: zero sat_count and maxabs
  input  wire              tag_fin,     // the element whose rq_y comes TAG_DELAY cycles later is the op's last
  input  wire [ADDR_W-1:0] tag_addr,    // ... and its destination address
  input  wire              in_valid,    // a requantised element (a run of LANES with wide) arrives
  input  wire              wide,        // ... as a run of LANES elements (stable like out_w)
  input  wire [LANES*OUT_W-1:0] rq_y,   // from tt_requant (saturated to OUT_W)
  input  wire [LANES-1:0]  rq_sat,
  input  wire [LANES*OUT_W-1:0] old_data,  // the destinations' old words, OLD_DELAY cycles early (with accumulate)
  input  wire              accumulate,
  input  wire [5:0]        rq_w,        // the first clamp's width, 2..OUT_W (stable like out_w); not out_w only with accumulate
  input  wire              rq_count,    // the first clamp (and rq_sat) count as saturations
  input  wire              negate,      // the accumulate subtracts the clamped value (only with accumulate)
  input  wire [5:0]        out_w,       // this op's output width, 2..OUT_W (checked by the unit at start)
  output wire              wr_en,
  output wire              wr_wide,     // the write is a run of LANES words from wr_addr
  output wire [ADDR_W-1:0] wr_addr,
  output wire [LANES*OUT_W-1:0] wr_data,
  output wire              fin,         // the cycle after the last element's write: the statistics complete now
  output wire [31:0]       sat_count,
  output wire [OUT_W-1:0]  maxabs
);

  localparam integer WB_W = OUT_W + 2;  // holds old + y of two OUT_W-bit words, and the limits
  localparam integer SAT_IW = $clog2(2 * LANES + 1);  // one write's saturations: 0..2 LANES

  generate
    if (OUT_W < 2 || OUT_W > 32) begin : g_bad_out_w
      error_tt_writeback_OUT_W_must_be_2_to_32 u_error ();
    end
    if (TAG_DELAY < 1 || OLD_DELAY < 1) begin : g_bad_delay
      error_tt_writeback_TAG_DELAY_and_OLD_DELAY_must_be_at_least_1 u_error ();
    end
    if (LANES < 1 || LANES > 16) begin : g_bad_lanes
      error_tt_writeback_LANES_must_be_1_to_16 u_error ();
    end
  endgenerate

  // The element's address, final flag and old word, delayed to meet its requantised value.
  wire [ADDR_W-1:0] in_addr;
  wire              in_fin;
  wire [LANES*OUT_W-1:0] old;
  tt_delay #(
    .WIDTH (ADDR_W),
    .DEPTH (TAG_DELAY)
  ) u_addr (
    .clk (clk),
    .rst (rst),
    .d   (tag_addr),
    .q   (in_addr)
  );
  tt_delay #(
    .WIDTH (1),
    .DEPTH (TAG_DELAY),
    .RESET (1)
  ) u_fin (
    .clk (clk),
    .rst (rst),
    .d   (tag_fin),
    .q   (in_fin)
  );
  tt_delay #(
    .WIDTH (LANES * OUT_W),
    .DEPTH (OLD_DELAY)
  ) u_old (
    .clk (clk),
    .rst (rst),
    .d   (old_data),
    .q   (old)
  );

  // The saturation limits of out_w and rq_w, registered: descriptor fields, stable during the op.
  wire signed [WB_W-1:0] one = {{(WB_W-1){1'b0}}, 1'b1};
  reg  signed [WB_W-1:0] lim_hi_q;
  reg  signed [WB_W-1:0] lim_lo_q;
  reg  signed [WB_W-1:0] rq_hi_q;
  reg  signed [WB_W-1:0] rq_lo_q;
  always @(posedge clk) begin
    lim_hi_q <= (one <<< (out_w - 6'd1)) - one;
    lim_lo_q <= -(one <<< (out_w - 6'd1));
    rq_hi_q  <= (one <<< (rq_w - 6'd1)) - one;
    rq_lo_q  <= -(one <<< (rq_w - 6'd1));
  end

  // ---- the element's tags through the stages (lane 0's address; a run's lane l writes the word after it) ----
  reg                    c_valid_q;
  reg                    c_fin_q;
  reg                    c_wide_q;
  reg [ADDR_W-1:0]       c_addr_q;
  always @(posedge clk) begin
    if (rst) begin
      c_valid_q <= 1'b0;
      c_fin_q   <= 1'b0;
    end else begin
      c_valid_q <= in_valid;
      c_fin_q   <= in_valid && in_fin;
    end
    c_addr_q <= in_addr;
    c_wide_q <= wide;
  end

  reg              wr_en_q;
  reg              wr_fin_q;
  reg              wr_wide_q;
  reg [ADDR_W-1:0] wr_addr_q;
  always @(posedge clk) begin
    if (rst) begin
      wr_en_q  <= 1'b0;
      wr_fin_q <= 1'b0;
    end else begin
      wr_en_q  <= c_valid_q;
      wr_fin_q <= c_fin_q;
    end
    wr_addr_q <= c_addr_q;
    wr_wide_q <= c_wide_q;
  end

  wire [LANES*OUT_W-1:0] wr_data_c;  // the registered write words
  wire [LANES*2-1:0]     wr_sat_c;   // and their saturation increments (0..2; lanes past 0 only in a run)
  wire [LANES*OUT_W-1:0] abs_c;      // |y| of each write word

  genvar l;
  generate
    for (l = 0; l < LANES; l = l + 1) begin : g_lane
      // ---- stage 1: clamp the requantised word to rq_w ----
      wire [OUT_W-1:0]       y_l   = rq_y[OUT_W*l +: OUT_W];
      wire [OUT_W-1:0]       old_l = old[OUT_W*l +: OUT_W];
      wire signed [WB_W-1:0] y_rq  = {{2{y_l[OUT_W-1]}}, y_l};
      wire                   hi1   = y_rq > rq_hi_q;
      wire                   lo1   = y_rq < rq_lo_q;
      wire signed [WB_W-1:0] y_c   = hi1 ? rq_hi_q : (lo1 ? rq_lo_q : y_rq);
      reg signed [WB_W-1:0]  c_y_q;
      reg                    c_sat_q;   // one RQ saturation, whichever range clamped
      reg signed [WB_W-1:0]  c_old_q;
      reg signed [WB_W-1:0]  c_room_hi_q;  // lim_hi - old: the sum saturates high iff y exceeds it (negate: old -
                                           // lim_hi, old - y saturates high iff y is below it)
      reg signed [WB_W-1:0]  c_room_lo_q;  // lim_lo - old: ... low iff y is below it (negate: old - lim_lo, iff above)
      wire signed [WB_W-1:0] old_ext = {{2{old_l[OUT_W-1]}}, old_l};
      always @(posedge clk) begin
        c_y_q       <= y_c;
        c_sat_q     <= rq_count && (rq_sat[l] || hi1 || lo1);
        c_old_q     <= old_ext;
        c_room_hi_q <= negate ? old_ext - lim_hi_q : lim_hi_q - old_ext;
        c_room_lo_q <= negate ? old_ext - lim_lo_q : lim_lo_q - old_ext;
      end

      // ---- stage 2: saturating accumulate, the registered write ----
      // old + y > lim_hi is y > lim_hi - old (old - y > lim_hi: y < old - lim_hi; no overflow in WB_W bits), so the
      // compares run beside the adder instead of after it.
      wire signed [WB_W-1:0] sum  = negate ? c_old_q - c_y_q : c_old_q + c_y_q;
      wire                   hi2  = negate ? c_y_q < c_room_hi_q : c_y_q > c_room_hi_q;
      wire                   lo2  = negate ? c_y_q > c_room_lo_q : c_y_q < c_room_lo_q;
      wire signed [WB_W-1:0] y2   = hi2 ? lim_hi_q : (lo2 ? lim_lo_q : sum);
      wire                   sat2 = accumulate && (hi2 || lo2);
      wire signed [WB_W-1:0] word = accumulate ? y2 : c_y_q;
      wire                   counts = l == 0 || c_wide_q;  // lanes past 0 carry an element only in a run
      wire [1:0]             unused_word_top = word[WB_W-1:OUT_W];  // y2 and c_y_q lie within out_w <= OUT_W bits

      reg [OUT_W-1:0] wr_data_q;
      reg [1:0]       wr_sat_q;
      always @(posedge clk) begin
        wr_data_q <= word[OUT_W-1:0];
        wr_sat_q  <= counts ? {1'b0, c_sat_q} + {1'b0, sat2} : 2'd0;
      end
      assign wr_data_c[OUT_W*l +: OUT_W] = wr_data_q;
      assign wr_sat_c[2*l +: 2]          = wr_sat_q;
      // |y| <= 2^(OUT_W-1) fits OUT_W bits unsigned, the most negative word included; 0 for a lane without an element
      assign abs_c[OUT_W*l +: OUT_W] = !(l == 0 || wr_wide_q) ? {OUT_W{1'b0}} :
                                       wr_data_q[OUT_W-1] ? (~wr_data_q + {{(OUT_W-1){1'b0}}, 1'b1}) : wr_data_q;
    end
  endgenerate

  // ---- stage 3: |y| of the words on the write port and their saturation increments (off the write path) ----
  reg                   st_valid_q;
  reg                   st_fin_q;
  reg [LANES*OUT_W-1:0] st_abs_q;
  reg [LANES*2-1:0]     st_sat_q;
  always @(posedge clk) begin
    if (rst || clear) begin
      st_valid_q <= 1'b0;
      st_fin_q   <= 1'b0;
    end else begin
      st_valid_q <= wr_en_q;
      st_fin_q   <= wr_fin_q;
    end
    st_abs_q <= abs_c;
    st_sat_q <= wr_sat_c;
  end

  // ---- stages 4 and 5: the op's statistics ----
  // The largest |y| of a write, by a balanced tree of compares (log2 LANES deep, not a chain of LANES), then the
  // compare with the op's max so far: log2 LANES + 1 compares in all, split by a register into two stages of at most
  // half of them each (rounded up), so no stage chains more than two compares at eight lanes. Node k of a tree is the
  // max of nodes 2k + 1 and 2k + 2; the leaves of stage 4's tree are the lanes' |y| (0 past LANES), those of stage
  // 5's the nodes stage 4 registers (the nodes MID_LVL levels up from the leaves).
  localparam integer TREE_N  = (LANES > 1) ? (1 << $clog2(LANES)) : 1;
  localparam integer TREE_LVL = (LANES > 1) ? $clog2(LANES) : 0;
  localparam integer MID_LVL = (TREE_LVL + 1) / 2;  // tree levels in stage 4
  localparam integer MID_N   = TREE_N >> MID_LVL;   // nodes between the stages
  reg [(2*TREE_N-1)*OUT_W-1:0] low_tree;  // node k in [OUT_W*k +: OUT_W]
  reg [(2*MID_N-1)*OUT_W-1:0]  high_tree;
  reg [SAT_IW-1:0] st_inc;  // the write's saturations
  integer i;
  integer k;
  always @* begin
    st_inc = {SAT_IW{1'b0}};
    low_tree = {((2*TREE_N-1)*OUT_W){1'b0}};
    for (i = 0; i < LANES; i = i + 1) begin
      low_tree[OUT_W*(TREE_N - 1 + i) +: OUT_W] = st_abs_q[OUT_W*i +: OUT_W];
    end
    for (k = TREE_N - 2; k >= MID_N - 1; k = k - 1) begin
      low_tree[OUT_W*k +: OUT_W] = (low_tree[OUT_W*(2*k + 1) +: OUT_W] > low_tree[OUT_W*(2*k + 2) +: OUT_W]) ?
                                   low_tree[OUT_W*(2*k + 1) +: OUT_W] : low_tree[OUT_W*(2*k + 2) +: OUT_W];
    end
    for (i = 0; i < LANES; i = i + 1) begin
      st_inc = st_inc + {{(SAT_IW-2){1'b0}}, st_sat_q[2*i +: 2]};
    end
  end
  reg                   mid_valid_q;
  reg [MID_N*OUT_W-1:0] mid_max_q;
  reg [SAT_IW-1:0]      mid_inc_q;
  always @(posedge clk) begin
    if (rst || clear) begin
      mid_valid_q <= 1'b0;
    end else begin
      mid_valid_q <= st_valid_q;
    end
    mid_max_q <= low_tree[OUT_W*(MID_N - 1) +: MID_N*OUT_W];
    mid_inc_q <= st_inc;
  end
  always @* begin
    high_tree = {((2*MID_N-1)*OUT_W){1'b0}};
    high_tree[OUT_W*(MID_N - 1) +: MID_N*OUT_W] = mid_max_q;
    for (k = MID_N - 2; k >= 0; k = k - 1) begin
      high_tree[OUT_W*k +: OUT_W] = (high_tree[OUT_W*(2*k + 1) +: OUT_W] > high_tree[OUT_W*(2*k + 2) +: OUT_W]) ?
                                    high_tree[OUT_W*(2*k + 1) +: OUT_W] : high_tree[OUT_W*(2*k + 2) +: OUT_W];
    end
  end
  wire [OUT_W-1:0] write_max = high_tree[0 +: OUT_W];
  reg [31:0]       sat_cnt_q;
  reg [OUT_W-1:0]  maxabs_q;
  wire [32:0]      sat_sum = {1'b0, sat_cnt_q} + {{(33-SAT_IW){1'b0}}, mid_inc_q};
  always @(posedge clk) begin
    if (rst || clear) begin
      sat_cnt_q <= 32'd0;
      maxabs_q  <= {OUT_W{1'b0}};
    end else if (mid_valid_q) begin
      sat_cnt_q <= sat_sum[32] ? 32'hFFFF_FFFF : sat_sum[31:0];
      if (write_max > maxabs_q) begin
        maxabs_q <= write_max;
      end
    end
  end

  assign wr_en     = wr_en_q;
  assign wr_wide   = wr_wide_q;
  assign wr_addr   = wr_addr_q;
  assign wr_data   = wr_data_c;
  assign fin       = st_fin_q;
  assign sat_count = sat_cnt_q;
  assign maxabs    = maxabs_q;

endmodule
`default_nettype wire
